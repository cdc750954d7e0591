-- The changed studies' rows of one of the index's main inputs ({view}, filled in by ingest/catalog.py), copied
-- once into the patch's database: the index's files read them there (see catalog_views/changed_rows.sql).
CREATE TABLE patch.{view} AS
SELECT * FROM catalog.{view} WHERE nct_id IN (SELECT nct_id FROM patch.changed_study)
