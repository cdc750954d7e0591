-- collaborators: one row per collaborator of a study version.
-- key: nct_id, content_hash, ordinal
SELECT nct_id, content_hash, ordinal, c.name AS name, c.class AS agency_class
FROM (
    SELECT nct_id, content_hash, generate_subscripts(l, 1) AS ordinal, unnest(l) AS c
    FROM (SELECT nct_id, content_hash, d.protocolSection.sponsorCollaboratorsModule.collaborators AS l FROM new_versions)
)
