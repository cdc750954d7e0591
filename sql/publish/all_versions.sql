-- all_versions: every version's identity and dates, from the segments' study_versions files ($files).
CREATE OR REPLACE TABLE all_versions AS
SELECT nct_id, content_hash, last_update_post_date, study_first_post_date, ingested_at
FROM read_parquet($files);
