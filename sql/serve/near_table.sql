-- filter.geo's versions, each with the distance of its closest site (km), filled by a search that has one
-- (serve/queries.sql, fill_near) and read by its statement ($near_given): a table rather than a list bound from
-- Python, whose hundreds of thousands of values cost more than the search. Made when the server's pool opens a
-- Mirror, before anything is prepared on it (ctmirror/server/pool.py), else on a connection's first search: a
-- table made later would have every statement prepared before it planned again at each execution.
CREATE OR REPLACE TEMP TABLE serve_near (version_no BIGINT, km DOUBLE);
