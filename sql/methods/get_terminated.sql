-- get_terminated(query, date_before, max_results): TERMINATED, WITHDRAWN or SUSPENDED trials matching the
-- query as a drug or drug class (query.intr areas) or as a condition (query.cond areas), by relevance (the
-- better of the two scores) then nct_id. drug_name: the first Drug/Biological intervention that is not a
-- placebo; condition: the first condition; termination_date: the primary completion date.
-- get_terminated_many takes each argument as a list (one entry per call; as_ofs: each call's strict cutoff, NULL
-- for the current state) and returns every call's trials as (k, card_no, version_no, relevance), in order; the
-- Python API reads their cards (stopped_card.card) by card_no. current_state: true (a constant) when no call has a
-- cutoff or an as_of (sql/schema/as_of_rules.sql); relax_queries: false (a constant) when no query has two words or
-- more (field_hits_many).
CREATE OR REPLACE MACRO get_terminated_many(any_queries, cutoffs, as_ofs, result_limits,
                                            current_state := false, relax_queries := true) AS TABLE
WITH calls AS (
    SELECT generate_subscripts(any_queries, 1) AS k, unnest(cutoffs)::DATE AS cutoff, unnest(as_ofs)::DATE AS as_of,
           unnest(result_limits) AS result_limit
),
checked_calls AS (SELECT * FROM calls WHERE current_state_holds(current_state, cutoff, as_of)),
m AS (
    SELECT k, version_no, round(max(score), 4) AS relevance
    FROM (SELECT * FROM field_hits_many('intervention', any_queries, as_ofs, relax := relax_queries,
                                        stopped_only := true)
          UNION ALL SELECT * FROM field_hits_many('condition', any_queries, as_ofs, relax := relax_queries,
                                                  stopped_only := true))
    GROUP BY k, version_no
)
SELECT m.k, s.card_no, s.version_no, m.relevance
FROM m
JOIN checked_calls AS calls USING (k)
JOIN stopped_card AS s USING (version_no)
WHERE shown_in(s.valid_from, s.valid_to, s.is_current, s.study_first_post_date, calls.cutoff, calls.as_of,
               current_state, as_of_exact := s.as_of_exact)
QUALIFY row_number() OVER (PARTITION BY m.k ORDER BY m.relevance DESC, s.study_no) <= calls.result_limit
ORDER BY m.k, m.relevance DESC, s.study_no;

CREATE OR REPLACE MACRO get_terminated(any_query, cutoff, result_limit, as_of := NULL) AS TABLE
SELECT unnest(stopped_trial_of(s.card)), r.relevance
FROM get_terminated_many([query_norm(any_query)], [cutoff], [as_of], [result_limit]) AS r
JOIN stopped_card AS s USING (card_no)
ORDER BY r.relevance DESC, r.card_no;
