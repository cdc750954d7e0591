-- The stopped_card rows of get_terminated's trials; {study_numbers} as in calls/cards.sql.
SELECT study_no, card FROM stopped_card WHERE study_no IN ({study_numbers})
