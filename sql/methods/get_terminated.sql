-- get_terminated(query, date_before, max_results): TERMINATED, WITHDRAWN or SUSPENDED trials matching the
-- query as a drug or drug class (query.intr areas) or as a condition (query.cond areas), by relevance (the
-- better of the two scores) then nct_id. drug_name: the first Drug/Biological intervention that is not a
-- placebo; condition: the first condition; termination_date: the primary completion date.
-- get_terminated_many takes each argument as a list (one entry per call) and returns every call's trials as
-- (k, study_no, relevance), in order; the Python API reads their cards (stopped_card.card) by study_no.
CREATE OR REPLACE MACRO get_terminated_many(any_queries, cutoffs, result_limits) AS TABLE
WITH calls AS (
    SELECT generate_subscripts(any_queries, 1) AS k, unnest(cutoffs)::DATE AS cutoff,
           unnest(result_limits) AS result_limit
),
m AS (
    SELECT k, study_no, round(max(score), 4) AS relevance
    FROM (SELECT * FROM field_hits_many('intervention', any_queries)
          UNION ALL SELECT * FROM field_hits_many('condition', any_queries))
    GROUP BY k, study_no
)
SELECT m.k, m.study_no, m.relevance
FROM m
JOIN calls USING (k)
JOIN stopped_card AS s USING (study_no)
WHERE in_scope(s.study_first_post_date, calls.cutoff)
QUALIFY row_number() OVER (PARTITION BY m.k ORDER BY m.relevance DESC, m.study_no) <= calls.result_limit
ORDER BY m.k, m.relevance DESC, m.study_no;

CREATE OR REPLACE MACRO get_terminated(any_query, cutoff, result_limit) AS TABLE
SELECT unnest(stopped_trial_of(s.card)), r.relevance
FROM get_terminated_many([any_query], [cutoff], [result_limit]) AS r
JOIN stopped_card AS s USING (study_no)
ORDER BY r.relevance DESC, r.study_no;
