-- The stopped cards of many calls' trials at once: one scan of the table.
SELECT study_no, card FROM stopped_card WHERE study_no IN (SELECT unnest($study_numbers::INTEGER[]))
