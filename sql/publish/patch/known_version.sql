-- patch.known_version: the versions of the changed studies the previous catalog already numbered (its
-- study_version, before the patch replaces it). A table whose rows for a version depend on that version's record
-- alone (PATCHED_BY_NEW_VERSION in ingest/catalog.py) keeps their rows.
CREATE TABLE patch.known_version AS
SELECT v.version_no, v.nct_id, v.content_hash
FROM catalog.study_version AS v
JOIN patch.changed_study USING (nct_id)
ORDER BY v.version_no;
