-- stats_exactness(condition, intervention, sponsor, date_before, as_of): one row: trials (in scope), exact (each
-- shown as the version the registry had published by the cutoff, which the warehouse holds), reconstructed (each
-- shown as a later version with what the registry recorded after the cutoff withheld), exact_share. In the current
-- state, and with holdout first_posted, every trial is exact.
s AS (SELECT as_of_exact FROM scope)
SELECT count(*) AS trials, count(*) FILTER (WHERE as_of_exact IS NOT false) AS exact,
       count(*) FILTER (WHERE as_of_exact = false) AS reconstructed,
       share_of(count(*) FILTER (WHERE as_of_exact IS NOT false), count(*)) AS exact_share
FROM s;
