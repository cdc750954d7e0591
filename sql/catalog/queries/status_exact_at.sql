-- status_exact_at: of the studies a strict answer at $as_of shows, how many are shown exactly (the warehouse holds
-- their version of that day) rather than reconstructed from a later version (`ctmirror status --as-of`).
SELECT count(*) AS studies, count(*) FILTER (WHERE as_of_exact) AS exact
FROM trial_card
WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, $as_of::DATE)
