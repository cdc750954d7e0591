-- The files holding the current state's records, in the order current_records.sql numbers them.
SELECT DISTINCT v.record_file
FROM trial_card AS t
JOIN study_version AS v USING (version_no)
WHERE t.is_current
ORDER BY v.record_file
