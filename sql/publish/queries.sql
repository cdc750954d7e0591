-- A publish's one-statement steps and lookups. Each query begins with a line `-- name: <name>` and is read by
-- read_sql("publish/queries.sql", "<name>") (ctmirror/core/sqlfiles.py).

-- name: catalog_format
-- catalog_format: what a catalog was built by, as its readers check it (ctmirror.core.sqlfiles.catalog_digests): the
-- digests of the SQL its tables and views come from and of its macros. A reader refuses a catalog whose tables'
-- digest is not its own (with the way out: `ctmirror republish`), and reads one whose macros' alone differ with its
-- own macros. format 9: what readers from before the digests compare, so that they refuse this catalog.
CREATE OR REPLACE TABLE catalog_format AS
SELECT 9 AS format, $tables_digest::VARCHAR AS tables_digest, $macros_digest::VARCHAR AS macros_digest;

-- name: current_version_keys
-- The current versions' keys, which the child tables' current rows are picked by (ingest/publish.py writes them
-- with polars as publish/current_rows.sql picks them: the same rows, in the same order).
SELECT nct_id, content_hash FROM current_versions

-- name: current_version_table
-- current_version: the (nct_id, content_hash) of each study's current version, for the views that read the
-- current rows of a table straight from the segments (search_terms, places, study_details, condition_links).
CREATE OR REPLACE TABLE current_version AS
SELECT nct_id, content_hash FROM studies ORDER BY nct_id;

-- name: newest_update
-- newest_update: the registry's newest last-update-posted date among current studies ($studies).
SELECT max(last_update_post_date) FROM read_parquet($studies)

-- name: no_registry_removals
-- registry_removals when no sync has found any study gone (and in snapshots, which hold the registry's clock only).
CREATE OR REPLACE TABLE registry_removals (
    nct_id VARCHAR, removed_on DATE, detected_at TIMESTAMP, run_id VARCHAR, merged_into VARCHAR);

-- name: present_studies
-- present_studies: current studies not already marked gone from the registry ($studies: a state's studies files).
SELECT nct_id FROM read_parquet($studies) WHERE removed_from_registry_on IS NULL

-- name: seen_in_receipts
-- seen_in_receipts: the studies a set of receipts ($receipts) carried ($sightings: every segment's sightings).
SELECT DISTINCT nct_id FROM read_parquet($sightings) WHERE list_contains($receipts, receipt_id)

-- name: state_counts
-- state_counts: one row for state.json: current studies, all versions, quarantined records ($quarantine files).
SELECT (SELECT count(*) FROM current_versions) AS studies, (SELECT count(*) FROM all_versions) AS versions,
       (SELECT count(*) FROM read_parquet($quarantine)) AS quarantined

-- name: without_records
-- A segment's study_versions without the records its record file now holds (ingest/publish.py), in the same row
-- order (a record file's row i is the file's row i), nor where a zip member held one (raw_member, in it too).
SELECT COLUMNS(lambda c: c NOT IN ('raw', 'raw_member')) FROM read_parquet($file)

-- name: without_records_sized
-- without_records.sql for a file written before study_versions had record_bytes: the size of each record it is
-- about to lose, last, where a newer file has it.
SELECT * EXCLUDE (raw), strlen(raw) AS record_bytes FROM read_parquet($file)
