-- The versions whose lead sponsor, a collaborator or the organisation that registered the study holds $phrase as
-- whole words, or as $how says (Essie's COVERAGE: the whole name, its first words, its last; covered()):
-- SponsorSearch's LeadSponsorName, CollaboratorName and OrgFullName (NICHD registers studies that NIH sponsors).
-- Each lead sponsor's and organisation's name is normalised once, not once per version.
WITH sponsors AS (SELECT DISTINCT sponsor_key, sponsor FROM trial_card),
phrase AS (SELECT search_norm($phrase::VARCHAR) AS norm),
leads AS (
    SELECT DISTINCT version_no FROM trial_card
    WHERE sponsor_key IN (SELECT sponsor_key FROM sponsors, phrase
                         WHERE covered(search_norm(sponsor), phrase.norm, $how::VARCHAR))
),
collaborating AS (
    SELECT DISTINCT v.version_no
    FROM all_collaborators AS c
    JOIN study_version AS v USING (nct_id, content_hash)
    WHERE covered(search_norm(c.name), (SELECT norm FROM phrase), $how::VARCHAR)
),
organising AS (
    SELECT DISTINCT v.version_no
    FROM all_studies AS s
    JOIN study_version AS v USING (nct_id, content_hash)
    WHERE s.organization IN (SELECT o.organization FROM (SELECT DISTINCT organization FROM all_studies) AS o, phrase
                             WHERE covered(search_norm(o.organization), phrase.norm, $how::VARCHAR))
)
SELECT version_no, 0.0 AS score FROM leads
WHERE length(trim((SELECT norm FROM phrase))) > 0
UNION
SELECT version_no, 0.0 AS score FROM collaborating
WHERE length(trim((SELECT norm FROM phrase))) > 0
UNION
SELECT version_no, 0.0 AS score FROM organising
WHERE length(trim((SELECT norm FROM phrase))) > 0
