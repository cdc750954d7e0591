-- segment_currency: per segment that added a version (its study_versions file), whether it holds a version that is
-- not current. Only such segments' rows are filtered and copied into a state; every other one's files are its rows
-- as they are, linked into the state unchanged. A segment that added no version is not listed: it has no rows in
-- any current table.
SELECT a.versions_file, bool_or(c.nct_id IS NULL) AS stale
FROM all_versions AS a
LEFT JOIN current_versions AS c
    ON c.nct_id = a.nct_id AND c.content_hash = a.content_hash AND c.versions_file = a.versions_file
GROUP BY a.versions_file
ORDER BY ALL
