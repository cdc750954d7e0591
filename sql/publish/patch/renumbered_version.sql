-- patch.renumbered_version: the changed studies' known versions (patch/known_version.sql) whose number the patch
-- changed, a version having been added before them (a record updated earlier loaded later): the rows kept for
-- them take their new number (patch/renumber_kept.sql).
CREATE TABLE patch.renumbered_version AS
SELECT k.version_no AS old_no, v.version_no AS new_no
FROM patch.known_version AS k
JOIN patch.study_version AS v USING (nct_id, content_hash)
WHERE v.version_no <> k.version_no;
