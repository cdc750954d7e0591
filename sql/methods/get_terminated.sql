-- get_terminated(query, date_before, max_results): TERMINATED, WITHDRAWN or SUSPENDED trials matching the
-- query as a drug or drug class (query.intr areas) or as a condition (query.cond areas), by relevance (the
-- better of the two scores) then nct_id. drug_name: the first Drug/Biological intervention that is not a
-- placebo; condition: the first condition; termination_date: the primary completion date.
CREATE OR REPLACE MACRO get_terminated(any_query, cutoff, result_limit) AS TABLE
WITH m AS (
    SELECT nct_id, max(score) AS relevance
    FROM (SELECT * FROM field_matches('intervention', any_query) UNION ALL SELECT * FROM field_matches('condition', any_query))
    GROUP BY nct_id
),
ranked AS (
    SELECT t.nct_id, round(m.relevance, 4) AS relevance
    FROM m
    JOIN trial_card AS t USING (nct_id)
    WHERE t.overall_status IN ('TERMINATED', 'WITHDRAWN', 'SUSPENDED')
      AND in_scope(t.study_first_post_date, cutoff)
    ORDER BY relevance DESC, t.nct_id
    LIMIT result_limit
)
SELECT
    t.nct_id, t.title, t.drug_names[1] AS drug_name, t.conditions[1] AS condition, t.phase, t.why_stopped,
    stop_category(t.why_stopped) AS stop_category, t.enrollment, t.sponsor, t.start_date,
    t.completion_date AS termination_date, t."references", t.overall_status AS status,
    t.as_of_exact, t.content_hash AS version,
    r.relevance
FROM ranked AS r
JOIN trial_card AS t USING (nct_id)
ORDER BY r.relevance DESC, t.nct_id;
