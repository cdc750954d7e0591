-- trial_card: one row per current study with every field of the contract's Trial, pre-assembled, plus what
-- the methods filter and rank on. The methods read it instead of joining six tables per call. Where the
-- contract's model needs a text the registry left out (an intervention without a type), it is ''.
CREATE TABLE trial_card AS
WITH
cond AS (SELECT nct_id, list(condition ORDER BY ordinal) AS conditions FROM conditions GROUP BY nct_id),
intr AS (
    SELECT nct_id,
           list({'intervention_type': coalesce(intervention_type, ''), 'intervention_name': coalesce(name, ''),
                  'description': description}
                ORDER BY ordinal) AS interventions,
           list(name ORDER BY ordinal) FILTER (WHERE intervention_type IN ('Drug', 'Biological')
                                               AND NOT is_placebo(name)) AS drug_names
    FROM interventions GROUP BY nct_id),
coll AS (SELECT nct_id, list(name ORDER BY ordinal) AS collaborators FROM collaborators GROUP BY nct_id),
outc AS (
    SELECT nct_id, list({'measure': coalesce(measure, ''), 'time_frame': time_frame} ORDER BY ordinal) AS primary_outcomes
    FROM outcomes WHERE outcome_type = 'PRIMARY' GROUP BY nct_id),
refs AS (
    SELECT nct_id, list(pmid ORDER BY ordinal) FILTER (WHERE pmid IS NOT NULL) AS refs
    FROM study_references GROUP BY nct_id)
SELECT
    s.nct_id,
    s.content_hash,
    coalesce(s.brief_title, s.official_title, '') AS title,
    s.official_title,
    s.brief_summary,
    s.phase,
    s.phases,
    phase_rank(s.phases) AS phase_rank,
    coalesce(s.overall_status, '') AS overall_status,
    s.why_stopped,
    coalesce(cond.conditions, []) AS conditions,
    coalesce(intr.interventions, []) AS interventions,
    coalesce(intr.drug_names, []) AS drug_names,
    coalesce(s.lead_sponsor, '') AS sponsor,
    s.lead_sponsor_class AS sponsor_class,
    coalesce(coll.collaborators, []) AS collaborators,
    s.enrollment,
    s.enrollment_type,
    s.start_date_raw AS start_date,
    s.start_date AS start_day,
    s.primary_completion_date_raw AS completion_date,
    s.primary_completion_date AS completion_day,
    s.completion_date_raw AS study_completion_date,
    s.study_type,
    coalesce(outc.primary_outcomes, []) AS primary_outcomes,
    s.has_results AS results_posted,
    s.results_first_post_date,
    coalesce(refs.refs, []) AS "references",
    s.study_first_post_date,
    s.last_update_post_date,
    s.sex,
    s.minimum_age_days,
    s.maximum_age_days,
    s.std_ages,
    s.as_of_exact
FROM studies AS s
LEFT JOIN cond USING (nct_id)
LEFT JOIN intr USING (nct_id)
LEFT JOIN coll USING (nct_id)
LEFT JOIN outc USING (nct_id)
LEFT JOIN refs USING (nct_id)
ORDER BY s.nct_id;
