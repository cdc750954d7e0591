-- The versions shown at $as_of (NULL: the current state) whose last known status is $value: a study shown as
-- UNKNOWN at that cutoff, its record's lastKnownStatus or, where it has none, the status it was stored with
-- (ctmirror/server/records.py shows the record so); no other study has one.
SELECT t.version_no, 0.0 AS score
FROM trial_card AS t
JOIN all_studies AS s ON s.nct_id = t.nct_id AND s.content_hash = t.content_hash
WHERE shown_at(t.valid_from, t.valid_to, t.is_current, t.study_first_post_date, NULL, $as_of::DATE,
               as_of_exact := t.as_of_exact)
  AND t.overall_status = 'UNKNOWN'
  AND upper(replace(coalesce(s.last_known_status, s.overall_status), ' ', '_')) = $value::VARCHAR
