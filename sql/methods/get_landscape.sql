-- get_landscape(condition, date_before, top_n): one row. Trials for the condition with a phase among
-- EARLY_PHASE1..PHASE4; competitors grouped by lead sponsor + drug name (case-insensitive) over Drug and
-- Biological interventions (placebo excluded), ranked by max phase then total enrollment (descending), then
-- sponsor and drug; phase_distribution keyed by each trial's display phase (sums to the total);
-- recent_starts: trials started from 1 January two calendar years before the reference date (date_before,
-- else today) up to the reference date, newest first.
CREATE OR REPLACE MACRO get_landscape(condition_query, cutoff, competitor_limit) AS TABLE
WITH trials AS (
    SELECT t.*
    FROM field_matches('condition', condition_query) AS m
    JOIN trial_card AS t USING (nct_id)
    WHERE in_scope(t.study_first_post_date, cutoff)
      AND list_has_any(t.phases, ['EARLY_PHASE1', 'PHASE1', 'PHASE2', 'PHASE3', 'PHASE4'])
),
drug_rows AS (
    SELECT DISTINCT ON (sponsor, lower(i.intervention_name), nct_id)
        nct_id, sponsor, i.intervention_name AS drug_name, i.intervention_type AS drug_type, phase_rank,
        overall_status, enrollment, start_day, start_date, as_of_exact
    FROM (SELECT *, unnest(interventions) AS i FROM trials)
    WHERE i.intervention_type IN ('Drug', 'Biological') AND NOT is_placebo(i.intervention_name)
    ORDER BY sponsor, lower(i.intervention_name), nct_id, i.intervention_name
),
competitors AS (
    SELECT
        sponsor,
        min(drug_name) AS drug_name,
        min(drug_type) AS drug_type,
        max(phase_rank) AS max_rank,
        count(*) AS trial_count,
        list(DISTINCT overall_status ORDER BY overall_status) AS statuses,
        sum(coalesce(enrollment, 0)) AS total_enrollment,
        arg_max(start_date, start_day) AS most_recent_start,
        bool_and(as_of_exact) AS as_of_exact
    FROM drug_rows
    GROUP BY sponsor, lower(drug_name)
),
ranked AS (
    SELECT * FROM competitors
    ORDER BY max_rank DESC, total_enrollment DESC, sponsor, lower(drug_name)
    LIMIT competitor_limit
),
reference AS (SELECT coalesce(cutoff::DATE, current_date) AS day),
recent AS (
    SELECT t.nct_id, t.sponsor, t.drug_names[1] AS drug, t.phase, t.start_date, t.start_day, t.as_of_exact,
           t.content_hash AS version
    FROM trials AS t, reference AS r
    WHERE t.start_day >= make_date(year(r.day) - 2, 1, 1) AND t.start_day <= r.day
)
SELECT
    (SELECT count(*) FROM trials) AS total_trial_count,
    coalesce((SELECT list({'sponsor': sponsor, 'drug_name': drug_name, 'drug_type': drug_type,
                           'max_phase': phase_label(['EARLY_PHASE1', 'PHASE1', 'PHASE2', 'PHASE3', 'PHASE4'][max_rank]),
                           'trial_count': trial_count, 'statuses': statuses,
                           'total_enrollment': total_enrollment, 'most_recent_start': most_recent_start,
                           'as_of_exact': as_of_exact}
                          ORDER BY max_rank DESC, total_enrollment DESC, sponsor, lower(drug_name))
              FROM ranked), []) AS competitors,
    coalesce((SELECT map(list(phase ORDER BY phase), list(n ORDER BY phase))
              FROM (SELECT phase, count(*) AS n FROM trials GROUP BY phase)), MAP {}) AS phase_distribution,
    coalesce((SELECT list({'nct_id': nct_id, 'sponsor': sponsor, 'drug': drug, 'phase': phase,
                           'start_date': start_date, 'as_of_exact': as_of_exact, 'version': version}
                          ORDER BY start_day DESC, nct_id)
              FROM recent), []) AS recent_starts;
