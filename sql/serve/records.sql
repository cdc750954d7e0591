-- The stored records (the registry's JSON, as received) of some versions, from the one file holding them ({file}:
-- a quoted path of the warehouse's own) and by NCT ID ({nct_ids}: quoted IDs our own page query returned, checked
-- to be NCT IDs): literals, so DuckDB reads only the row groups that hold them. The caller keeps the versions asked.
SELECT nct_id, content_hash, raw FROM read_parquet({file}) WHERE nct_id IN ({nct_ids})
