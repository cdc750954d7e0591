-- The cards of a call's trials, from {table} (trial_card or stopped_card, named by the Python API). {study_numbers}
-- is a list of integer literals that the Python API formats from the numbers the ranking query returned (never
-- from user input): DuckDB looks keys up in the table's index only when they are literals, and reads 200 cards
-- this way in a few milliseconds where a join on bound values scans all of them. Larger sets (a backtest's)
-- read them in one scan: cards_scan.sql.
SELECT study_no, card FROM {table} WHERE study_no IN ({study_numbers})
