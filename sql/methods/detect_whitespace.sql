-- detect_whitespace(drug, condition, cutoff): one row. exact_match_count, drug_only_trials and condition_only_trials
-- are true counts (no cap). When no trial matches both, condition_drugs lists other drugs tested for the condition
-- (with the trial's condition that matched): Phase 2 or later (Phase 1/Phase 2 included), ranked by phase
-- (descending: highest phase, then lowest, so Phase 2 before Phase 1/Phase 2) then activity (recruiting first) then
-- nct_id, one entry per drug name (case-insensitive) keeping its best-ranked trial, top 50. Placebo, sham and
-- vehicle are not drugs; Drug and Biological interventions count. detect_whitespace_many takes each argument as a
-- list (one entry per call; as_ofs: each call's strict cutoff, NULL for the current state) and answers every call,
-- by its position k from 1. current_state: true (a constant) when no call has a cutoff or an as_of, which lets the
-- planner drop the cutoff rules (sql/schema/as_of_rules.sql); relax_drugs, relax_conditions: false (a constant) when
-- no drug, or no condition, has two words or more.
CREATE OR REPLACE MACRO detect_whitespace_many(drug_queries, condition_queries, cutoffs, as_ofs,
                                               current_state := false, relax_drugs := true,
                                               relax_conditions := true) AS TABLE
WITH calls AS (
    SELECT generate_subscripts(drug_queries, 1) AS k, unnest(cutoffs)::DATE AS cutoff, unnest(as_ofs)::DATE AS as_of
),
checked_calls AS (SELECT * FROM calls WHERE current_state_holds(current_state, cutoff, as_of)),
-- Both sides' matched versions join trial_card in one pass.
matched AS (
    SELECT k, true AS is_drug, version_no
    FROM field_studies_many('intervention', drug_queries, as_ofs, relax := relax_drugs)
    UNION ALL
    SELECT k, false, version_no
    FROM field_studies_many('condition', condition_queries, as_ofs, relax := relax_conditions)
),
shown AS (
    SELECT m.k, m.is_drug, m.version_no, t.study_no, t.card_no, t.phase_rank, t.phase_order, t.overall_status
    FROM (SELECT m.k, m.is_drug, m.version_no, c.cutoff, c.as_of,
                 unnest(shown_keys_in(m.version_no, c.as_of, current_state)) AS shown_key
          FROM matched AS m JOIN checked_calls AS c USING (k)) AS m
    JOIN trial_card AS t ON t.shown_key = m.shown_key
    WHERE shown_in(t.valid_from, t.valid_to, t.shown_key < shown_key(0, false), t.study_first_post_date, m.cutoff,
                   m.as_of, current_state, as_of_exact := t.as_of_exact)
),
c AS (SELECT * EXCLUDE (is_drug) FROM shown WHERE NOT is_drug),
counts AS (  -- per call, the versions shown for both sides, for the drug, for the condition
    SELECT calls.k, coalesce(n.exact_n, 0) AS exact_n, coalesce(n.drug_n, 0) AS drug_n,
           coalesce(n.condition_n, 0) AS condition_n
    FROM calls
    LEFT JOIN (
        SELECT k, count(*) FILTER (WHERE for_drug AND for_condition) AS exact_n,
               count(*) FILTER (WHERE for_drug) AS drug_n, count(*) FILTER (WHERE for_condition) AS condition_n
        FROM (SELECT k, version_no, bool_or(is_drug) AS for_drug, bool_or(NOT is_drug) AS for_condition
              FROM shown GROUP BY k, version_no)
        GROUP BY k
    ) AS n USING (k)
),
phase2_trials AS (  -- only for whitespace: the condition's Phase 2+ trials
    SELECT c.* FROM c JOIN counts USING (k) WHERE c.phase_rank >= 3 AND counts.exact_n = 0
),
candidates AS (
    -- The IN list lets the scan of trial_drug skip what no candidate needs (and all of it when there is no
    -- whitespace); joined alone, DuckDB builds its hash table from all of trial_drug.
    SELECT c.k, c.study_no, c.card_no, g.drug_name, c.phase_order AS phase_rank,
           status_rank(c.overall_status) AS activity
    FROM phase2_trials AS c
    JOIN trial_drug AS g USING (version_no)
    WHERE g.version_no IN (SELECT version_no FROM phase2_trials)
),
best AS (  -- per call and drug name (case-insensitive), its best-ranked trial (of two spellings, the first)
    SELECT k, b.*
    FROM (SELECT k, arg_min({'study_no': study_no, 'card_no': card_no, 'drug_name': drug_name,
                             'phase_rank': phase_rank, 'activity': activity},
                            {'phase': -phase_rank, 'activity': activity, 'study': study_no, 'name': drug_name}) AS b
          FROM candidates GROUP BY k, lower(drug_name))
),
top AS (
    SELECT * FROM best
    QUALIFY row_number() OVER (PARTITION BY k ORDER BY phase_rank DESC, activity, study_no, lower(drug_name)) <= 50
),
phrases AS (SELECT k, list(phrase) AS phrases FROM search_phrases_many('condition', condition_queries) GROUP BY k),
described AS (
    -- condition: the trial's first condition that matches the query, else its first condition.
    SELECT top.*, t.nct_id, t.phase, t.overall_status AS status, t.as_of_exact, t.reconstructed_from,
           t.content_hash AS version,
           card_conditions(x.card_head) AS conditions, x.condition_norms
    FROM top
    JOIN trial_card AS t USING (card_no)
    JOIN trial_text AS x ON x.version_no = t.version_no
),
listed AS (
    SELECT d.k,
           list({'nct_id': d.nct_id, 'drug_name': d.drug_name,
                 'condition': coalesce(d.conditions[list_position(list_transform(d.condition_norms,
                                           n -> list_bool_or(list_transform(coalesce(p.phrases, []),
                                                                            ph -> contains(n, ph)))), true)],
                                       d.conditions[1]),
                 'phase': d.phase, 'status': d.status, 'as_of_exact': d.as_of_exact,
                 'reconstructed_from': strftime(d.reconstructed_from, '%Y-%m-%d'), 'version': d.version}
                ORDER BY d.phase_rank DESC, d.activity, d.study_no, lower(d.drug_name)) AS condition_drugs
    FROM described AS d
    LEFT JOIN phrases AS p USING (k)
    GROUP BY d.k
)
SELECT counts.k, counts.exact_n = 0 AS is_whitespace, counts.exact_n AS exact_match_count,
       counts.drug_n AS drug_only_trials, counts.condition_n AS condition_only_trials,
       coalesce(listed.condition_drugs, []) AS condition_drugs
FROM counts
LEFT JOIN listed USING (k)
ORDER BY counts.k;

CREATE OR REPLACE MACRO detect_whitespace(drug_query, condition_query, cutoff, as_of := NULL) AS TABLE
SELECT * EXCLUDE (k) FROM detect_whitespace_many([query_norm(drug_query)], [query_norm(condition_query)], [cutoff],
                                          [as_of]);
