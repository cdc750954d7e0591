-- The cards of many calls' trials at once (more than answers.LITERAL_KEYS_MAX), as in cards.sql (the same columns):
-- one scan of each table.
SELECT t.card_no, x.card_head, x.references_json, t.reconstructed_from, t.overall_status, t.why_stopped,
       t.results_posted, t.as_of_exact, t.enrollment, t.start_date, t.completion_date, t.withheld
FROM (SELECT * FROM trial_card WHERE card_no IN (SELECT unnest($card_numbers::BIGINT[]))) AS t
JOIN (SELECT * FROM trial_text WHERE version_no IN (SELECT unnest($version_numbers::BIGINT[]))) AS x
    USING (version_no)
