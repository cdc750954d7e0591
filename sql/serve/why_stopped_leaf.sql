-- The versions shown at $as_of (NULL: the current state) whose stop reason, as that cutoff shows it (none before
-- the study stopped), holds $phrase as whole words.
SELECT version_no, 0.0 AS score
FROM trial_card
WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, $as_of::DATE,
               as_of_exact := as_of_exact)
  AND contains(search_norm(why_stopped), search_norm($phrase::VARCHAR))
  AND length(trim(search_norm($phrase))) > 0
