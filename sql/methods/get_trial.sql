-- get_trial(nct_id): the contract's Trial for one study, or no row. An NCT alias resolves to its study.
CREATE OR REPLACE MACRO get_trial(wanted_id) AS TABLE
SELECT
    t.nct_id, t.title, t.brief_summary, t.phase, t.overall_status, t.why_stopped, t.conditions, t.interventions,
    t.sponsor, t.collaborators, t.enrollment, t.start_date, t.completion_date, coalesce(t.study_type, '') AS study_type,
    t.primary_outcomes, t.results_posted, t."references", t.phases, t.as_of_exact, t.content_hash AS version
FROM trial_card AS t
WHERE t.nct_id = coalesce((SELECT min(nct_id) FROM nct_aliases WHERE alias_nct_id = upper(wanted_id)), upper(wanted_id));
