-- all_versions: every version's identity and dates, from the segments' study_versions files ($files), with the
-- file that holds it (which segment added it).
CREATE OR REPLACE TABLE all_versions AS
SELECT nct_id, content_hash, last_update_post_date, study_first_post_date, ingested_at, filename AS versions_file
FROM read_parquet($files, filename = true);
