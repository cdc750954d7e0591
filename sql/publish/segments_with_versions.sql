-- segments_with_versions: the study_versions files (one per segment) holding any version; a segment that added
-- none (every record already known, or quarantined) has no rows in any current table.
SELECT DISTINCT versions_file FROM all_versions ORDER BY ALL
