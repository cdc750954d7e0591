-- trial_text: one row per version (version_no) with the contract's Trial as JSON, less what a cutoff changes: the
-- head of the object (card_head, without its closing brace), the version's references (references_json) and its
-- conditions as the matcher reads them (condition_norms). A call's trials are read as card_json(...) of it and
-- their trial_card row (sql/methods/_cards.sql). Where the contract's model needs a text the registry left out
-- (an intervention without a type), it is ''.
-- trial_card: one row per version and span of cutoffs (version_epoch) with what the methods filter and rank on,
-- the columns a cutoff changes as of that span (overall_status, why_stopped, results_posted, enrollment_type, ...),
-- and where it is shown (valid_from, valid_to, is_current: see shown_at). card_no numbers its rows (card_number).
-- interventions, std_ages and phases stay columns for the statistics (sql/stats/) and for analysts' filters.
-- Both are built a range of studies at a time (ingest/catalog.py): their rows per version gather lists, which
-- DuckDB cannot spill, so a whole registry's at once would not fit a small budget.

-- sponsor_keys(): each lead sponsor's place in sponsor order over every version the index holds, so that grouping
-- and ranking by it is grouping and ranking by the name. A publish that replaces some studies' rows
-- (ingest/catalog.py) renumbers with it the rows whose place a new name moved, as with drug_keys() below.
CREATE OR REPLACE MACRO sponsor_keys() AS TABLE
SELECT sponsor, (dense_rank() OVER (ORDER BY sponsor))::INTEGER AS sponsor_key
FROM (SELECT DISTINCT coalesce(s.lead_sponsor, '') AS sponsor
      FROM all_studies AS s JOIN study_version AS sv USING (nct_id, content_hash));
CREATE TEMP TABLE sponsor_key_of AS FROM sponsor_keys();

CREATE OR REPLACE TEMP MACRO trial_text_rows(study_from, study_to, nct_from, nct_to) AS TABLE
WITH
cond AS (
    SELECT nct_id, content_hash, in_ordinal_order(list({'o': ordinal, 'v': condition})) AS conditions
    FROM all_conditions WHERE nct_id BETWEEN nct_from AND nct_to GROUP BY nct_id, content_hash),
intr AS (
    SELECT nct_id, content_hash,
           in_ordinal_order(list({'o': ordinal, 'v': {'intervention_type': coalesce(intervention_type, ''),
                                                      'intervention_name': coalesce(name, ''),
                                                      'description': description}})) AS interventions
    FROM all_interventions WHERE nct_id BETWEEN nct_from AND nct_to GROUP BY nct_id, content_hash),
coll AS (
    SELECT nct_id, content_hash, in_ordinal_order(list({'o': ordinal, 'v': name})) AS collaborators
    FROM all_collaborators WHERE nct_id BETWEEN nct_from AND nct_to GROUP BY nct_id, content_hash),
outc AS (
    SELECT nct_id, content_hash,
           in_ordinal_order(list({'o': ordinal, 'v': {'measure': coalesce(measure, ''), 'time_frame': time_frame}}))
               AS primary_outcomes
    FROM all_outcomes WHERE outcome_type = 'PRIMARY' AND nct_id BETWEEN nct_from AND nct_to
    GROUP BY nct_id, content_hash),
refs AS (
    SELECT nct_id, content_hash,
           in_ordinal_order(list({'o': ordinal, 'v': pmid}) FILTER (WHERE pmid IS NOT NULL)) AS refs
    FROM all_study_references WHERE nct_id BETWEEN nct_from AND nct_to GROUP BY nct_id, content_hash)
SELECT
    sv.version_no,
    -- a JSON object less its closing brace: card_json appends what a cutoff changes
    rtrim(to_json({
        'nct_id': s.nct_id, 'title': coalesce(s.brief_title, s.official_title, ''), 'official_title': s.official_title,
        'brief_summary': s.brief_summary, 'phase': s.phase, 'conditions': coalesce(cond.conditions, []),
        'interventions': coalesce(intr.interventions, []), 'sponsor': coalesce(s.lead_sponsor, ''),
        'collaborators': coalesce(coll.collaborators, []), 'study_type': coalesce(s.study_type, ''),
        'primary_outcomes': coalesce(outc.primary_outcomes, []), 'phases': s.phases, 'version': s.content_hash
    })::VARCHAR, '}') AS card_head,
    to_json(coalesce(refs.refs, []))::VARCHAR AS references_json,
    -- the conditions normalised (search_norm), in order: which of them a query matched, read without
    -- normalising text in the query
    list_transform(coalesce(cond.conditions, []), c -> search_norm(c)) AS condition_norms
FROM all_studies AS s
JOIN study_version AS sv USING (nct_id, content_hash)
LEFT JOIN cond USING (nct_id, content_hash)
LEFT JOIN intr USING (nct_id, content_hash)
LEFT JOIN coll USING (nct_id, content_hash)
LEFT JOIN outc USING (nct_id, content_hash)
LEFT JOIN refs USING (nct_id, content_hash)
WHERE sv.study_no BETWEEN study_from AND study_to AND s.nct_id BETWEEN nct_from AND nct_to
ORDER BY sv.version_no;
CREATE TABLE trial_text AS FROM trial_text_rows(1, 0, '', '');

CREATE OR REPLACE TEMP MACRO trial_card_rows(study_from, study_to, nct_from, nct_to) AS TABLE
WITH
intr AS (
    SELECT nct_id, content_hash,
           in_ordinal_order(list({'o': ordinal, 'v': {'intervention_type': coalesce(intervention_type, ''),
                                                      'intervention_name': coalesce(name, ''),
                                                      'description': description}})) AS interventions,
           in_ordinal_order(list({'o': ordinal, 'v': name}) FILTER (WHERE intervention_type IN ('Drug', 'Biological')
                                                                    AND NOT is_placebo(name))) AS drug_names
    FROM all_interventions WHERE nct_id BETWEEN nct_from AND nct_to GROUP BY nct_id, content_hash),
versions AS (
SELECT
    sv.version_no,
    sv.study_no,
    s.nct_id,
    s.content_hash,
    coalesce(s.brief_title, s.official_title, '') AS title,
    s.phase,
    s.phases,
    phase_rank(s.phases) AS phase_rank,
    coalesce(intr.interventions, []) AS interventions,
    coalesce(intr.drug_names, [])[1] AS first_drug,
    coalesce(s.lead_sponsor, '') AS sponsor,
    s.lead_sponsor_class AS sponsor_class,
    s.enrollment,
    s.start_date_raw AS start_date,
    s.start_date AS start_day,
    s.primary_completion_date_raw AS completion_date,
    s.primary_completion_date AS completion_day,
    s.completion_date_raw AS study_completion_date,
    s.study_type,
    s.study_first_post_date,
    s.sex,
    s.minimum_age_days,
    s.maximum_age_days,
    s.std_ages,
    phase_order(s.phases) AS phase_order,
    phase_mask(s.phases) AS phase_mask,
    -- the record's submission, QC and verification dates, for v2 sorts and AREA[...] ranges (one after a cutoff is
    -- left out where read: submission_day in sql/schema/helpers.sql)
    {'status_verified_date': s.status_verified_date, 'study_first_submit_date': s.study_first_submit_date,
     'study_first_submit_qc_date': s.study_first_submit_qc_date,
     'results_first_submit_date': s.results_first_submit_date,
     'results_first_submit_qc_date': s.results_first_submit_qc_date,
     'disp_first_submit_date': s.disp_first_submit_date, 'disp_first_submit_qc_date': s.disp_first_submit_qc_date,
     'disp_first_post_date': s.disp_first_post_date, 'last_update_submit_date': s.last_update_submit_date,
     'estimated_results_first_submit_date': s.estimated_results_first_submit_date,
     'first_mcp_post_date': s.first_mcp_post_date} AS submission_dates
FROM all_studies AS s
JOIN study_version AS sv USING (nct_id, content_hash)
LEFT JOIN intr USING (nct_id, content_hash)
WHERE sv.study_no BETWEEN study_from AND study_to AND s.nct_id BETWEEN nct_from AND nct_to
)
-- card_no numbers a version's rows after its version_no (card_number), in the order of their spans.
SELECT
    card_number(e.version_no, row_number() OVER (PARTITION BY e.version_no ORDER BY e.valid_from NULLS LAST))
        AS card_no,
    v.* REPLACE (
        CASE WHEN NOT list_contains(e.withheld, 'enrollment') THEN v.enrollment END AS enrollment,
        CASE WHEN NOT list_contains(e.withheld, 'start_date') THEN v.start_date END AS start_date,
        CASE WHEN NOT list_contains(e.withheld, 'start_date') THEN v.start_day END AS start_day,
        CASE WHEN NOT list_contains(e.withheld, 'primary_completion_date') THEN v.completion_date END
            AS completion_date,
        CASE WHEN NOT list_contains(e.withheld, 'primary_completion_date') THEN v.completion_day END
            AS completion_day,
        CASE WHEN NOT list_contains(e.withheld, 'completion_date') THEN v.study_completion_date END
            AS study_completion_date),
    sponsors.sponsor_key,
    e.valid_from,
    e.valid_to,
    e.is_current,
    coalesce(e.overall_status, '') AS overall_status,
    e.why_stopped,
    e.has_results AS results_posted,
    e.results_first_post_date,
    e.enrollment_type,
    e.last_update_post_date,
    e.as_of_exact,
    e.reconstructed_from,
    e.withheld,
    shown_key(e.version_no, e.is_current) AS shown_key
FROM version_epoch AS e
JOIN versions AS v USING (version_no)
JOIN sponsor_key_of AS sponsors USING (sponsor)
ORDER BY card_no;
-- trial_card stores the current state's rows first, then the others, each in card_no order: a method joins its
-- matched versions on shown_key (sql/schema/as_of_rules.sql), so for a call on the current state the scan skips
-- the row groups of past rows, two thirds of the table.
CREATE TABLE trial_card AS FROM trial_card_rows(1, 0, '', '');
CREATE TEMP TABLE past_cards AS FROM trial_card;

-- for each range of studies:
INSERT INTO trial_text FROM trial_text_rows($study_from, $study_to, $nct_from, $nct_to);
CREATE OR REPLACE TEMP TABLE range_cards AS FROM trial_card_rows($study_from, $study_to, $nct_from, $nct_to);
INSERT INTO trial_card FROM range_cards WHERE is_current ORDER BY card_no;
INSERT INTO past_cards FROM range_cards WHERE NOT is_current ORDER BY card_no;
-- after the ranges:
INSERT INTO trial_card FROM past_cards ORDER BY card_no;
DROP TABLE past_cards;
DROP TABLE IF EXISTS range_cards;
CREATE UNIQUE INDEX trial_text_version_no ON trial_text (version_no);

-- The Python API reads the cards of a call's trials by their numbers: an index lookup of literal keys, where a
-- join would scan every card.
CREATE UNIQUE INDEX trial_card_card_no ON trial_card (card_no);
-- A join of up to a thousand matched versions on shown_key hands the keys to the scan of trial_card, which looks
-- them up here rather than reading every current row.
CREATE INDEX trial_card_shown_key ON trial_card (shown_key);
-- trial_drug: the drugs being tested in each version (Drug and Biological interventions that are not placebo,
-- sham or vehicle), one row each, for the methods that group or rank many trials' drugs.
CREATE TABLE trial_drug AS
SELECT sv.version_no, i.ordinal, i.name AS drug_name, i.intervention_type AS drug_type
FROM all_interventions AS i
JOIN study_version AS sv USING (nct_id, content_hash)
WHERE i.intervention_type IN ('Drug', 'Biological') AND NOT is_placebo(i.name)
ORDER BY sv.version_no, i.ordinal;
-- drug_keys(): each drug name's place, compared case-insensitively, in name order.
CREATE OR REPLACE MACRO drug_keys() AS TABLE
SELECT drug_lower, (dense_rank() OVER (ORDER BY drug_lower))::INTEGER AS drug_key
FROM (SELECT DISTINCT lower(coalesce(drug_name, '')) AS drug_lower FROM trial_drug);
-- trial_drug_key: each version's drugs once per name compared case-insensitively (drug_key: the place of the
-- lower-cased name in name order, drug_keys()), with the first spelling in name order and its type: what
-- get_landscape groups competitors by, as integers.
CREATE TABLE trial_drug_key AS
WITH per_trial AS (
    SELECT version_no, lower(coalesce(drug_name, '')) AS drug_lower, min(coalesce(drug_name, '')) AS drug_name,
           arg_min(drug_type, coalesce(drug_name, '')) AS drug_type
    FROM trial_drug
    GROUP BY version_no, lower(coalesce(drug_name, ''))
)
SELECT p.version_no, k.drug_key, p.drug_name, p.drug_type
FROM per_trial AS p
JOIN drug_keys() AS k USING (drug_lower)
ORDER BY version_no, drug_key;
-- stopped_card: the rows of trial_card whose status is TERMINATED, WITHDRAWN or SUSPENDED, with get_terminated's
-- answer for each as JSON (drug_name: the first drug being tested; condition: the first condition;
-- termination_date: the primary completion date; references only where the version is shown exactly). A small
-- table: get_terminated ranks its matches against it alone.
CREATE TABLE stopped_card AS
SELECT
    c.card_no, c.version_no, c.study_no, c.study_first_post_date, c.valid_from, c.valid_to, c.is_current,
    c.as_of_exact,
    to_json({
        'nct_id': c.nct_id, 'title': c.title, 'drug_name': c.first_drug,
        'condition': (x.card_head || '}') ->> '$.conditions[0]', 'phase': c.phase,
        'why_stopped': c.why_stopped, 'stop_category': stop_category(c.why_stopped), 'enrollment': c.enrollment,
        'sponsor': c.sponsor, 'start_date': c.start_date, 'termination_date': c.completion_date,
        'references': CASE WHEN c.as_of_exact THEN from_json(x.references_json, '["VARCHAR"]') ELSE [] END,
        'status': c.overall_status, 'as_of_exact': c.as_of_exact,
        'reconstructed_from': strftime(c.reconstructed_from, '%Y-%m-%d'),
        'withheld': list_transform(list_filter(c.withheld, w -> w <> 'completion_date'),
                                   w -> CASE w WHEN 'primary_completion_date' THEN 'termination_date' ELSE w END),
        'version': c.content_hash
    })::VARCHAR AS card
FROM trial_card AS c
JOIN trial_text AS x USING (version_no)
WHERE c.overall_status IN ('TERMINATED', 'WITHDRAWN', 'SUSPENDED')
ORDER BY c.card_no;
CREATE UNIQUE INDEX stopped_card_card_no ON stopped_card (card_no);
