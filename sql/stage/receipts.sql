-- receipts: this batch's receipts (rows added with stage/queries.sql (receipt_row)), for ingested_at, source, origin
-- and the date of the source's data where it has one (an AACT dump's date).
CREATE OR REPLACE TABLE receipts (
    receipt_id BIGINT, received_at TIMESTAMP, source VARCHAR, origin VARCHAR, source_date DATE
);
