-- The versions whose lead sponsor or a collaborator holds $phrase as whole words.
WITH sponsors AS (SELECT DISTINCT sponsor_key, sponsor FROM trial_card),
phrase AS (SELECT search_norm($phrase::VARCHAR) AS norm),
leads AS (
    SELECT DISTINCT version_no FROM trial_card
    WHERE sponsor_key IN (SELECT sponsor_key FROM sponsors, phrase WHERE contains(search_norm(sponsor), phrase.norm))
),
collaborating AS (
    SELECT DISTINCT v.version_no
    FROM all_collaborators AS c
    JOIN study_version AS v USING (nct_id, content_hash)
    WHERE contains(search_norm(c.name), (SELECT norm FROM phrase))
)
SELECT version_no, 0.0 AS score FROM leads
WHERE length(trim((SELECT norm FROM phrase))) > 0
UNION
SELECT version_no, 0.0 AS score FROM collaborating
WHERE length(trim((SELECT norm FROM phrase))) > 0
