-- A v2 search's values (ctmirror/server/v2/search.py, _page), bound into this temporary table's one row, by type: each
-- `$name` of the search's statement reads its place in one of the lists (argument.sql), so the statement's text
-- depends on the request's shape alone and is prepared once per connection for each shape, then only executed
-- (planning it was a third of a search). Made when the server's pool opens a Mirror, before anything is
-- prepared on it (ctmirror/server/pool.py), else on a connection's first search.
CREATE OR REPLACE TEMP TABLE serve_args AS
SELECT NULL::VARCHAR[] AS texts, NULL::VARCHAR[][] AS text_lists, NULL::BIGINT[] AS integers,
       NULL::DOUBLE[] AS numbers, NULL::DATE[] AS dates, NULL::BOOLEAN[] AS flags;
-- filter.geo's versions, each with the distance of its closest site (km), filled by a search that has one
-- (serve/queries.sql, fill_near) and read by its statement ($near_given): a table rather than a list bound from
-- Python, whose hundreds of thousands of values cost more than the search.
CREATE OR REPLACE TEMP TABLE serve_near (version_no BIGINT, km DOUBLE);
