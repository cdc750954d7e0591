-- A view of the current versions' rows of a table the state does not copy, read from the segments that hold
-- every version ({view} and {files} filled in by ctmirror/catalog.py; current_version from
-- sql/publish/queries.sql (current_version_table)).
CREATE OR REPLACE VIEW {view} AS
SELECT t.*
FROM read_parquet({files}, union_by_name = true) AS t
SEMI JOIN current_version AS c ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
