-- The cards of many calls' trials at once (more than answers.LITERAL_KEYS_MAX), from {table} as in cards.sql:
-- one scan of the table.
SELECT study_no, card FROM {table} WHERE study_no IN (SELECT unnest($study_numbers::INTEGER[]))
