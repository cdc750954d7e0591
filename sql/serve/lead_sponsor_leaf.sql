-- The versions whose lead sponsor's name holds $phrase as whole words, or as $how says (Essie's COVERAGE: the whole
-- name, its first words, its last; covered()); names compared once each, not per study.
WITH sponsors AS (SELECT DISTINCT sponsor_key, sponsor FROM trial_card),
wanted AS (
    SELECT sponsor_key FROM sponsors
    WHERE covered(search_norm(sponsor), search_norm($phrase::VARCHAR), $how::VARCHAR)
      AND length(trim(search_norm($phrase))) > 0
)
SELECT DISTINCT version_no, 0.0 AS score FROM trial_card WHERE sponsor_key IN (SELECT sponsor_key FROM wanted)
