-- detect_whitespace(drug, condition, cutoff): one row. exact_match_count, drug_only_trials and
-- condition_only_trials are true counts (no cap). When no trial matches both, condition_drugs lists other
-- drugs tested for the condition (with the trial's condition that matched): Phase 2 or later (Phase 1/Phase 2 included), ranked by phase (descending:
-- highest phase, then lowest, so Phase 2 before Phase 1/Phase 2) then activity (recruiting
-- first) then nct_id, one entry per drug name (case-insensitive) keeping its best-ranked trial, top 50.
-- Placebo, sham and vehicle are not drugs; Drug and Biological interventions count.
CREATE OR REPLACE MACRO detect_whitespace(drug_query, condition_query, cutoff) AS TABLE
WITH d AS (
    SELECT m.nct_id FROM field_matches('intervention', drug_query) AS m JOIN trial_card AS t USING (nct_id)
    WHERE in_scope(t.study_first_post_date, cutoff)
),
c AS (
    SELECT m.nct_id FROM field_matches('condition', condition_query) AS m JOIN trial_card AS t USING (nct_id)
    WHERE in_scope(t.study_first_post_date, cutoff)
),
exact AS (SELECT count(*) AS n FROM d JOIN c USING (nct_id)),
phrases AS (SELECT list(phrase) AS phrases FROM search_phrases('condition', condition_query)),
candidates AS (
    -- condition: the trial's first condition that matches the query, else its first condition.
    SELECT t.nct_id, unnest(t.drug_names) AS drug_name,
           coalesce(list_filter(t.conditions, x -> list_bool_or(list_transform(p.phrases,
                                                     ph -> contains(search_norm(x), ph))))[1],
                    t.conditions[1]) AS condition,
           t.phase, t.overall_status AS status, t.as_of_exact, t.content_hash AS version,
           phase_order(t.phases) AS phase_rank,
           status_rank(t.overall_status) AS activity
    FROM c JOIN trial_card AS t USING (nct_id), phrases AS p
    WHERE t.phase_rank >= 3
),
best AS (
    SELECT * FROM candidates
    QUALIFY row_number() OVER (PARTITION BY lower(drug_name) ORDER BY phase_rank DESC, activity, nct_id) = 1
),
top AS (SELECT * FROM best ORDER BY phase_rank DESC, activity, nct_id, lower(drug_name) LIMIT 50)
SELECT
    (SELECT n FROM exact) = 0 AS is_whitespace,
    (SELECT n FROM exact) AS exact_match_count,
    (SELECT count(*) FROM d) AS drug_only_trials,
    (SELECT count(*) FROM c) AS condition_only_trials,
    CASE WHEN (SELECT n FROM exact) = 0 THEN coalesce((
        SELECT list({'nct_id': nct_id, 'drug_name': drug_name, 'condition': condition, 'phase': phase,
                     'status': status, 'as_of_exact': as_of_exact, 'version': version} ORDER BY phase_rank DESC, activity, nct_id, lower(drug_name))
        FROM top), []) ELSE [] END AS condition_drugs;
