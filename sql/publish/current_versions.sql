-- current_versions: the version of each study that `studies` and its child tables show: the one the registry
-- updated last; among versions with the same update date, the one ingested last; then by hash, for determinism.
-- versions_file: the segment that holds it.
CREATE OR REPLACE TABLE current_versions AS
SELECT nct_id, content_hash, versions_file
FROM all_versions
QUALIFY row_number() OVER (
    PARTITION BY nct_id
    ORDER BY last_update_post_date DESC NULLS LAST, ingested_at DESC, content_hash, versions_file
) = 1;
