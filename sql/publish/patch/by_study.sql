-- A patch of a table of studies' rows ({table}, keyed by study_no): the changed studies' rows replaced.
DELETE FROM {table} WHERE study_no IN (SELECT study_no FROM patch.changed_study);
INSERT INTO {table} FROM patch.{table};
