-- trial_card: one row per current study with every field of the contract's Trial, pre-assembled, plus what
-- the methods filter and rank on. The methods read it instead of joining six tables per call. Where the
-- contract's model needs a text the registry left out (an intervention without a type), it is ''.
-- study_no numbers the studies exactly as study_number does (that table is built in the search index's lane).
-- card is the contract's Trial as JSON (plus official_title, for search): the methods rank on the narrow columns
-- and then read one text per returned trial, where reading list columns of scattered rows would decode whole
-- vectors of them. The lists only the card needs are kept in it alone; interventions, std_ages and phases stay
-- columns for the statistics (sql/stats/) and for analysts' filters.
CREATE TABLE trial_card AS
WITH
cond AS (
    SELECT nct_id, in_ordinal_order(list({'o': ordinal, 'v': condition})) AS conditions
    FROM conditions GROUP BY nct_id),
intr AS (
    SELECT nct_id,
           in_ordinal_order(list({'o': ordinal, 'v': {'intervention_type': coalesce(intervention_type, ''),
                                                      'intervention_name': coalesce(name, ''),
                                                      'description': description}})) AS interventions,
           in_ordinal_order(list({'o': ordinal, 'v': name}) FILTER (WHERE intervention_type IN ('Drug', 'Biological')
                                                                    AND NOT is_placebo(name))) AS drug_names
    FROM interventions GROUP BY nct_id),
coll AS (
    SELECT nct_id, in_ordinal_order(list({'o': ordinal, 'v': name})) AS collaborators
    FROM collaborators GROUP BY nct_id),
outc AS (
    SELECT nct_id,
           in_ordinal_order(list({'o': ordinal, 'v': {'measure': coalesce(measure, ''), 'time_frame': time_frame}}))
               AS primary_outcomes
    FROM outcomes WHERE outcome_type = 'PRIMARY' GROUP BY nct_id),
refs AS (
    SELECT nct_id, in_ordinal_order(list({'o': ordinal, 'v': pmid}) FILTER (WHERE pmid IS NOT NULL)) AS refs
    FROM study_references GROUP BY nct_id),
base AS (
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
),
-- Numbered in narrow queries of their own and joined: a window over the wide rows sorted every card's lists, twice.
-- study_no is study_number's numbering (00_study_number.sql), computed again here because this table is built
-- beside the search index, not after it; both number the same current studies in nct_id order.
numbers AS (SELECT nct_id, (row_number() OVER (ORDER BY nct_id))::INTEGER AS study_no FROM studies),
-- The sponsor's place in sponsor order: grouping and ranking by it is grouping and ranking by the name.
sponsors AS (
    SELECT sponsor, (dense_rank() OVER (ORDER BY sponsor))::INTEGER AS sponsor_key
    FROM (SELECT DISTINCT coalesce(lead_sponsor, '') AS sponsor FROM studies)
)
SELECT
    study_no,
    base.* EXCLUDE (conditions, drug_names, collaborators, primary_outcomes, "references"),
    drug_names[1] AS first_drug,
    phase_order(phases) AS phase_order,
    phase_mask(phases) AS phase_mask,
    sponsor_key,
    to_json({
        'nct_id': nct_id, 'title': title, 'official_title': official_title, 'brief_summary': brief_summary,
        'phase': phase,
        'overall_status': overall_status, 'why_stopped': why_stopped, 'conditions': conditions,
        'interventions': interventions, 'sponsor': sponsor, 'collaborators': collaborators,
        'enrollment': enrollment, 'start_date': start_date, 'completion_date': completion_date,
        'study_type': coalesce(study_type, ''), 'primary_outcomes': primary_outcomes,
        'results_posted': results_posted, 'references': "references", 'phases': phases,
        'as_of_exact': as_of_exact, 'version': content_hash
    })::VARCHAR AS card
FROM base
JOIN numbers USING (nct_id)
JOIN sponsors USING (sponsor)
ORDER BY study_no;
-- The Python API reads the cards of a call's trials by their numbers: an index lookup of literal keys, where a
-- join would scan every card.
CREATE UNIQUE INDEX trial_card_study_no ON trial_card (study_no);
-- trial_drug: the drugs being tested (Drug and Biological interventions that are not placebo, sham or vehicle),
-- one row each, for the methods that group or rank many trials' drugs.
CREATE TABLE trial_drug AS
SELECT t.study_no, i.ordinal, i.name AS drug_name, i.intervention_type AS drug_type
FROM interventions AS i
JOIN trial_card AS t USING (nct_id)
WHERE i.intervention_type IN ('Drug', 'Biological') AND NOT is_placebo(i.name)
ORDER BY t.study_no, i.ordinal;
-- trial_drug_key: each trial's drugs once per name compared case-insensitively (drug_key: the place of the
-- lower-cased name in name order), with the first spelling in name order and its type: what get_landscape
-- groups competitors by, as integers.
CREATE TABLE trial_drug_key AS
WITH per_trial AS (
    SELECT study_no, lower(coalesce(drug_name, '')) AS drug_lower, min(coalesce(drug_name, '')) AS drug_name,
           arg_min(drug_type, coalesce(drug_name, '')) AS drug_type
    FROM trial_drug
    GROUP BY study_no, lower(coalesce(drug_name, ''))
)
SELECT study_no, (dense_rank() OVER (ORDER BY drug_lower))::INTEGER AS drug_key, drug_name, drug_type
FROM per_trial
ORDER BY study_no, drug_key;
-- stopped_card: the TERMINATED, WITHDRAWN and SUSPENDED trials, with get_terminated's answer for each as JSON
-- (drug_name: the first drug being tested; condition: the first condition; termination_date: the primary
-- completion date; conditions and references come from the trial's card). A small table: get_terminated ranks
-- its matches against it alone.
CREATE TABLE stopped_card AS
SELECT
    study_no,
    study_first_post_date,
    to_json({
        'nct_id': nct_id, 'title': title, 'drug_name': first_drug, 'condition': card ->> '$.conditions[0]',
        'phase': phase,
        'why_stopped': why_stopped, 'stop_category': stop_category(why_stopped), 'enrollment': enrollment,
        'sponsor': sponsor, 'start_date': start_date, 'termination_date': completion_date,
        'references': from_json(card -> '$.references', '["VARCHAR"]'), 'status': overall_status,
        'as_of_exact': as_of_exact, 'version': content_hash
    })::VARCHAR AS card
FROM trial_card
WHERE overall_status IN ('TERMINATED', 'WITHDRAWN', 'SUSPENDED')
ORDER BY study_no;
CREATE UNIQUE INDEX stopped_card_study_no ON stopped_card (study_no);
