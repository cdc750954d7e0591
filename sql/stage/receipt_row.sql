-- One receipt of the batch (parameters bound: id, received at, source, origin, source date).
INSERT INTO receipts VALUES (?, ?, ?, ?, ?)
