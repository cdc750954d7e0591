-- One page of a /api/v2/studies request's matches (matches.sql, spliced in below: the request's terms and filters),
-- in its sort order, then NCT ID; with how many there are in all (total), what a cutoff changes of each study's
-- record (ctmirror/server/records.py) and where the record is. One statement: the matches are found once.
{matches},
counted AS (
    SELECT version_no, card_no, study_no, key1, key2, decayed_key1, count(*) OVER () AS total FROM matches
),
ranked AS (  -- geoDecay's key first, unless more than 10,000 studies are found (matches.sql)
    SELECT version_no, card_no, study_no, total, key2,
           CASE WHEN $geo_decay::BOOLEAN AND total <= 10000 THEN decayed_key1 ELSE key1 END AS key1
    FROM counted
)
SELECT p.total, p.version_no, t.nct_id, t.content_hash, t.overall_status, t.why_stopped, t.results_posted,
       t.results_first_post_date, t.enrollment_type, t.last_update_post_date, t.as_of_exact, v.record_file,
       v.record_row
FROM (SELECT * FROM ranked ORDER BY key1 NULLS LAST, key2 NULLS LAST, study_no LIMIT $limit OFFSET $offset) AS p
JOIN trial_card AS t ON t.card_no = p.card_no
JOIN study_version AS v ON v.version_no = p.version_no
ORDER BY p.key1 NULLS LAST, p.key2 NULLS LAST, p.study_no
