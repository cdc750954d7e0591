-- The rows of a catalog view ({view}: one of its views of study rows, filled in by ingest/catalog.py) that belong
-- to the studies a patch replaces: what the index's files read to build those studies' rows alone.
CREATE VIEW patch.{view} AS
SELECT * FROM catalog.{view} WHERE nct_id IN (SELECT nct_id FROM patch.changed_study)
