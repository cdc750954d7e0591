-- Adds the versions of earlier segments ($files: their study_versions files) to known_versions.
INSERT INTO known_versions SELECT nct_id, content_hash FROM read_parquet($files)
