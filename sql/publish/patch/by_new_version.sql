-- A patch of a table of versions' rows that depend on a version's record alone ({table}, keyed by version_no):
-- the rows of the versions the previous catalog knew stay (patch/known_version.sql), and any other row of the
-- changed studies goes; then (after patch/renumber_kept.sql, where versions were renumbered) the changed
-- studies' new versions' rows, which the patch built, follow the table's other rows.
DELETE FROM {table}
WHERE version_study(version_no) IN (SELECT study_no FROM patch.changed_study)
  AND version_no NOT IN (SELECT version_no FROM patch.known_version);
INSERT INTO {table} FROM patch.{table};
