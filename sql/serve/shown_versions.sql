-- Every version shown at $as_of (NULL: the current state): what an Essie NOT is taken from.
SELECT version_no, 0.0 AS score FROM trial_card
WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, $as_of::DATE,
                   as_of_exact := as_of_exact)
