-- Where the record of every study shown at $as_of (NULL: the current state) is, in NCT ID order, with what a cutoff
-- changes of it (ctmirror/server/records.py): the columns of page.sql's rows, for the statistics read from records
-- (ctmirror/server/field_stats.py).
SELECT t.version_no, t.nct_id, t.content_hash, t.overall_status, t.why_stopped, t.results_posted,
       t.results_first_post_date, t.enrollment_type, t.last_update_post_date, t.as_of_exact, v.record_file,
       v.record_row
FROM trial_card AS t
JOIN study_version AS v ON v.version_no = t.version_no
WHERE shown_at(t.valid_from, t.valid_to, t.is_current, t.study_first_post_date, NULL, $as_of::DATE,
               as_of_exact := t.as_of_exact)
ORDER BY t.nct_id
