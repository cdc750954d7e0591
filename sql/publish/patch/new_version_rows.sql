-- The rows of one of the index's inputs ({view}, filled in by ingest/catalog.py) for the changed studies' new
-- versions alone, read from the files of the segments the previous state did not read ($files), which hold every
-- version it did not know: the tables built from this input keep their rows of the versions it knew. The table is
-- made with the view's columns (its files' union) and filled by name.
CREATE TABLE patch.{view} AS FROM catalog.{view} LIMIT 0;
INSERT INTO patch.{view} BY NAME
SELECT r.*
FROM read_parquet($files::VARCHAR[], union_by_name = true) AS r
ANTI JOIN patch.known_version AS k USING (nct_id, content_hash)
WHERE r.nct_id IN (SELECT nct_id FROM patch.changed_study);
