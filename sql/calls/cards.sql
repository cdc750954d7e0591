-- The cards of a call's trials, from trial_card's rows ({card_numbers}) and their versions' trial_text
-- ({version_numbers}): lists of integer literals the Python API formats from the numbers the ranking query returned
-- (never from user input). DuckDB looks keys up in a table's index only when they are literals and the scan has no
-- other filter, and reads 200 cards this way in a few milliseconds where a join on bound values scans all of them.
-- Each lookup is materialised: joined as subqueries, the join's own filter on version_no reached trial_card's scan
-- too, which then read every row group holding a key (200 cards: 220 ms against 4 at 500,000 studies). Larger sets
-- (a backtest's) read them in one scan: cards_scan.sql. The columns come as card_json takes them (in its order,
-- sql/methods/_cards.sql), and the Python API writes the card's JSON from them as it does
-- (ctmirror/read/answers.py, card_text), in less time than the text took here.
WITH t AS MATERIALIZED (
    SELECT card_no, version_no, reconstructed_from, overall_status, why_stopped, results_posted, as_of_exact,
           enrollment, start_date, completion_date, withheld
    FROM trial_card WHERE card_no IN ({card_numbers})
),
x AS MATERIALIZED (SELECT version_no, card_head, references_json FROM trial_text WHERE version_no IN ({version_numbers}))
SELECT t.card_no, x.card_head, x.references_json, t.reconstructed_from, t.overall_status, t.why_stopped,
       t.results_posted, t.as_of_exact, t.enrollment, t.start_date, t.completion_date, t.withheld
FROM t
JOIN x USING (version_no)
