-- A patched publish's one-statement steps. Each query begins with a line `-- name: <name>` and is read by
-- read_sql("publish/patch/queries.sql", "<name>") (ctmirror/core/sqlfiles.py).

-- name: by_study
-- A patch of a table of studies' rows ({table}, keyed by study_no): the changed studies' rows replaced.
DELETE FROM {table} WHERE study_no IN (SELECT study_no FROM patch.changed_study);
INSERT INTO {table} FROM patch.{table};

-- name: by_version
-- A patch of a table of versions' rows ({table}, keyed by version_no): the changed studies' rows replaced by those
-- the patch built, which follow the table's other rows.
DELETE FROM {table} WHERE version_study(version_no) IN (SELECT study_no FROM patch.changed_study);
INSERT INTO {table} FROM patch.{table};

-- name: changed_rows_copy
-- The changed studies' rows of one of the index's main inputs ({view}, filled in by ingest/catalog.py), copied
-- once into the patch's database: the index's files read them there (see catalog_views/queries.sql (changed_rows)).
CREATE TABLE patch.{view} AS
SELECT * FROM catalog.{view} WHERE nct_id IN (SELECT nct_id FROM patch.changed_study)

-- name: new_version_studies
-- The studies with a version in the segments the previous state did not read ($files: their study_versions).
SELECT DISTINCT nct_id FROM read_parquet($files)

-- name: renumbered_count
-- How many known versions the patch renumbered (patch/renumbered_version.sql).
SELECT count(*) FROM patch.renumbered_version;
