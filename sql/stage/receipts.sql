-- receipts: this batch's receipts (rows added with stage/receipt_row.sql), for ingested_at, source and origin.
CREATE OR REPLACE TEMP TABLE receipts (receipt_id BIGINT, received_at TIMESTAMP, source VARCHAR, origin VARCHAR);
