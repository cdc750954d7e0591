-- The first nct_id of each chunk of $every studies, in nct_id order (a dump is put back together a chunk at a time).
SELECT nct_id
FROM (SELECT nct_id, row_number() OVER (ORDER BY nct_id) - 1 AS n FROM aact_studies WHERE nct_id IS NOT NULL)
WHERE n % $every = 0
ORDER BY nct_id;
