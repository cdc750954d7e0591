-- Where the current state's record of each study is (see ctmirror/server/v2/study_lookup.py, CurrentStudies): the number of its
-- NCT ID, in order, with the file and row of the version the current state shows (as study_by_id.sql finds it).
SELECT CAST(substr(t.nct_id, 4) AS INTEGER) AS nct_number, v.record_file, v.record_row
FROM trial_card AS t
JOIN study_version AS v USING (version_no)
WHERE t.is_current
ORDER BY nct_number
