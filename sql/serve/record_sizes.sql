-- /api/v2/stats/size: each shown study's stored record, by NCT ID, with its size in bytes (the JSON as stored; the
-- live API counts gzip-compressed bytes). $as_of: NULL for the current state.
SELECT v.nct_id, v.record_bytes AS size_bytes
FROM study_versions AS v
SEMI JOIN (SELECT nct_id, content_hash FROM trial_card
           WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, $as_of::DATE,
                   as_of_exact := as_of_exact)) AS t
    ON t.nct_id = v.nct_id AND t.content_hash = v.content_hash
