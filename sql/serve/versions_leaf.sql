-- The versions listed in $versions (found by the caller, ctmirror/server/v2/record_areas.py: their numbers joined by
-- commas, a text because DuckDB binds a list of 500,000 numbers 20 times slower than it splits this), unscored.
SELECT CAST(listed AS BIGINT) AS version_no, 0.0 AS score
FROM (SELECT unnest(string_split($versions::VARCHAR, ',')) AS listed)
WHERE listed <> ''
