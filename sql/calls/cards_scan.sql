-- The trial cards of many calls' trials at once (more than answers.LITERAL_KEYS_MAX): one scan of the cards.
SELECT study_no, card FROM trial_card WHERE study_no IN (SELECT unnest($study_numbers::INTEGER[]))
