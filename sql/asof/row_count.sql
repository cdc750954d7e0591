-- The rows of one snapshot table ($file), for snapshot.json.
SELECT count(*) FROM read_parquet($file)
