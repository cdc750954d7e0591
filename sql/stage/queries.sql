-- The staging's one-statement steps: receipts written, and what a batch already knows. Each query begins with a
-- line `-- name: <name>` and is read by read_sql("stage/queries.sql", "<name>") (ctmirror/core/sqlfiles.py).

-- name: known_rejects
-- known_rejects: the (reason, md5 of the text) of every record earlier segments quarantined (filled by
-- known_rejects_of.sql), so that loading the same bad record again adds no second quarantine row.
CREATE OR REPLACE TABLE known_rejects (reason VARCHAR, text_md5 VARCHAR);

-- name: known_rejects_of
-- Adds the quarantined records of earlier segments ($files: their quarantine files) to known_rejects.
INSERT INTO known_rejects SELECT DISTINCT reason, md5(record_text) FROM read_parquet($files)

-- name: known_versions
-- known_versions: the (nct_id, content_hash) of every version earlier segments hold (filled by known_versions_of.sql).
CREATE OR REPLACE TABLE known_versions (nct_id VARCHAR, content_hash VARCHAR);

-- name: known_versions_of
-- Adds the versions of earlier segments ($files: their study_versions files) to known_versions.
INSERT INTO known_versions SELECT nct_id, content_hash FROM read_parquet($files)

-- name: receipt_row
-- One receipt of the batch (parameters bound: id, received at, source, origin, source date).
INSERT INTO receipts VALUES (?, ?, ?, ?, ?)

-- name: study_structure
-- The record shape (sql/schema/study_structure.sql) as JSON text, for the Python validator to compile.
SELECT study_structure()
