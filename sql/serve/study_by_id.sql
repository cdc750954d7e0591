-- The study an NCT ID (or an alias of it) names, as shown at $as_of (NULL: the current state): its canonical NCT ID,
-- what a cutoff changes of its record, and the file holding the record; then the version's last update (the
-- date a reconstruction was made from).
SELECT t.version_no, t.nct_id, t.content_hash, t.overall_status, t.why_stopped, t.results_posted,
       t.results_first_post_date, t.enrollment_type, t.last_update_post_date, t.as_of_exact, v.record_file,
       v.record_row, t.reconstructed_from
FROM trial_card AS t
JOIN study_version AS v USING (version_no)
WHERE t.nct_id = coalesce((SELECT nct_id FROM nct_alias WHERE alias_nct_id = $nct_id::VARCHAR), $nct_id::VARCHAR)
  AND shown_at(t.valid_from, t.valid_to, t.is_current, t.study_first_post_date, NULL, $as_of::DATE,
               as_of_exact := t.as_of_exact)
