-- The current versions' keys, which the child tables' current rows are picked by (ingest/publish.py writes them
-- with polars as publish/current_rows.sql picks them: the same rows, in the same order).
SELECT nct_id, content_hash FROM current_versions
