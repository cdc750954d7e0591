-- One page of a /api/v2/studies request's matches ({table}: the request's matches, made by matches_table.sql), in
-- its sort order, then NCT ID; with what a cutoff changes of each study's record (ctmirror/server/records.py) and
-- the file holding the record.
SELECT p.version_no, t.nct_id, t.content_hash, t.overall_status, t.why_stopped, t.results_posted,
       t.results_first_post_date, t.enrollment_type, t.last_update_post_date, t.as_of_exact, v.record_file,
       v.record_row
FROM (SELECT * FROM {table} ORDER BY key1 NULLS LAST, key2 NULLS LAST, study_no LIMIT $limit OFFSET $offset) AS p
JOIN trial_card AS t ON t.card_no = p.card_no
JOIN study_version AS v ON v.version_no = p.version_no
ORDER BY p.key1 NULLS LAST, p.key2 NULLS LAST, p.study_no
