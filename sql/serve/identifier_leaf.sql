-- The versions whose organisation's study ID or secondary ID is $norm (search_norm of a whole ID), within $areas
-- (OrgStudyId, SecondaryId; NULL: both), scored $score.
SELECT DISTINCT version_no, $score::DOUBLE AS score
FROM study_identifier
WHERE norm = $norm::VARCHAR AND ($areas::VARCHAR[] IS NULL OR list_contains($areas::VARCHAR[], area))
