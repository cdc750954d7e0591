-- search_trials(drug, condition, date_before, phase_filter, max_results): trials matching the drug (query.intr
-- areas) and the condition (query.cond areas), as the contract's Trial, by relevance (sum of the two scores)
-- then nct_id. phase_filter: NULL, 'PHASE3' or '(PHASE2 OR PHASE3)'.
-- search_trials_many takes each argument as a list (one entry per call) and returns every call's trials as
-- (k: the call's position from 1, study_no, relevance), in order: ranked on narrow integer-keyed columns. The
-- Python API runs it (one call or a backtest's thousands at once) and then reads the trials' cards
-- (trial_card.card) by study_no; search_trials joins them here.
CREATE OR REPLACE MACRO search_trials_many(drug_queries, condition_queries, cutoffs, phase_filters, result_limits)
AS TABLE
WITH calls AS (
    SELECT generate_subscripts(drug_queries, 1) AS k, unnest(cutoffs)::DATE AS cutoff,
           unnest(phase_filters) AS phase_filter, unnest(result_limits) AS result_limit
),
d AS (SELECT * FROM field_hits_many('intervention', drug_queries)),
c AS (
    -- The condition's hits are summed only for the drug's studies: the only ones that can match both, and far
    -- fewer than a broad condition's.
    SELECT r.k, r.study_no, bit_or(r.area_mask) AS area_mask
    FROM field_hit_rows_many('condition', condition_queries) AS r
    SEMI JOIN d ON d.k = r.k AND d.study_no = r.study_no
    GROUP BY r.k, r.study_no
),
scored AS (
    SELECT d.k, d.study_no, round(d.score + m.score, 4) AS relevance, calls.result_limit
    FROM d
    JOIN c USING (k, study_no)
    JOIN area_mask_score AS m ON m.field = 'condition' AND m.area_mask = c.area_mask
    JOIN calls USING (k)
    JOIN trial_card AS t USING (study_no)
    WHERE in_scope(t.study_first_post_date, calls.cutoff)
      AND (calls.phase_filter IS NULL OR t.phase_mask & phase_mask(phase_filter_list(calls.phase_filter)) <> 0)
)
SELECT k, study_no, relevance
FROM scored
QUALIFY row_number() OVER (PARTITION BY k ORDER BY relevance DESC, study_no) <= result_limit
ORDER BY k, relevance DESC, study_no;

CREATE OR REPLACE MACRO search_trials(drug_query, condition_query, cutoff, phase_filter_text, result_limit) AS TABLE
SELECT unnest(trial_of(t.card)), r.relevance
FROM search_trials_many([drug_query], [condition_query], [cutoff], [phase_filter_text], [result_limit]) AS r
JOIN trial_card AS t USING (study_no)
ORDER BY r.relevance DESC, r.study_no;
