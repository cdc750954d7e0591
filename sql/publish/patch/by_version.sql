-- A patch of a table of versions' rows ({table}, keyed by version_no): the changed studies' rows replaced by those
-- the patch built, which follow the table's other rows.
DELETE FROM {table} WHERE version_study(version_no) IN (SELECT study_no FROM patch.changed_study);
INSERT INTO {table} FROM patch.{table};
