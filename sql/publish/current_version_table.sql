-- current_version: the (nct_id, content_hash) of each study's current version, for the views that read the
-- current rows of a table straight from the segments (search_terms, places, study_details, condition_links).
CREATE OR REPLACE TABLE current_version AS
SELECT nct_id, content_hash FROM studies ORDER BY nct_id;
