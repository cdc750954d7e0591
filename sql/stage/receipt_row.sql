-- One receipt of the batch (parameters bound: id, received at, source, origin).
INSERT INTO receipts VALUES (?, ?, ?, ?)
