-- /api/v2/stats/field/sizes: how many elements one list field ($field, a piece name of
-- ctmirror/server/field_stats.py's SIZE_SQL) has in each study shown at $as_of, as (size, studies) for every
-- size of one or more (a study without the list is not counted, as the API counts it), from list_sizes.sql's rows,
-- which field_stats.py writes in below.
SELECT size, count(*) AS studies FROM ({list_sizes}) WHERE size > 0 GROUP BY size ORDER BY studies DESC, size
