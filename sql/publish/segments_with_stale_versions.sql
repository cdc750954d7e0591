-- segments_with_stale_versions: the study_versions files (one per segment) holding a version that is not current:
-- only those segments' rows are filtered and copied into a state; every other segment's files are its rows as they
-- are, linked into the state unchanged.
SELECT DISTINCT a.versions_file
FROM all_versions AS a
ANTI JOIN current_versions AS c
    ON c.nct_id = a.nct_id AND c.content_hash = a.content_hash AND c.versions_file = a.versions_file
ORDER BY ALL
