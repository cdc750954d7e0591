-- search_trials(drug, condition, date_before, phase_filter, max_results): trials matching the drug (query.intr
-- areas) and the condition (query.cond areas), as the contract's Trial, by relevance (sum of the two scores)
-- then nct_id. phase_filter: NULL, 'PHASE3' or '(PHASE2 OR PHASE3)'. The matches are ranked on narrow columns
-- first; the wide Trial columns are read for the returned rows only.
CREATE OR REPLACE MACRO search_trials(drug_query, condition_query, cutoff, phase_filter_text, result_limit) AS TABLE
WITH d AS (SELECT * FROM field_matches('intervention', drug_query)),
c AS (SELECT * FROM field_matches('condition', condition_query)),
ranked AS (
    SELECT t.nct_id, round(d.score + c.score, 4) AS relevance
    FROM d
    JOIN c USING (nct_id)
    JOIN trial_card AS t USING (nct_id)
    WHERE in_scope(t.study_first_post_date, cutoff)
      AND (phase_filter_text IS NULL OR list_has_any(t.phases, phase_filter_list(phase_filter_text)))
    ORDER BY relevance DESC, t.nct_id
    LIMIT result_limit
)
SELECT
    t.nct_id, t.title, t.brief_summary, t.phase, t.overall_status, t.why_stopped, t.conditions, t.interventions,
    t.sponsor, t.collaborators, t.enrollment, t.start_date, t.completion_date, coalesce(t.study_type, '') AS study_type,
    t.primary_outcomes, t.results_posted, t."references", t.phases,
    t.as_of_exact, t.content_hash AS version,
    r.relevance
FROM ranked AS r
JOIN trial_card AS t USING (nct_id)
ORDER BY r.relevance DESC, t.nct_id;
