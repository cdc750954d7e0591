-- One page of a /api/v2/studies request's matches (after matches.sql, spliced in on the next line), in its sort order, then NCT ID; with
-- what a cutoff changes of each study's record (ctmirror/server/records.py).
{matches}
SELECT version_no, nct_id, content_hash, overall_status, why_stopped, results_posted, results_first_post_date,
       enrollment_type, last_update_post_date, as_of_exact
FROM matches
ORDER BY key1 NULLS LAST, key2 NULLS LAST, study_no
LIMIT $limit OFFSET $offset
