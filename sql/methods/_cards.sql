-- card_json(card_head, references_json, reconstructed_from, overall_status, why_stopped, results_posted,
-- as_of_exact, enrollment, start_date, completion_date, withheld): the contract's Trial as JSON, from a
-- version's trial_text and the trial_card row a call shows: what its cutoff changes and withholds (`withheld`
-- names the Trial's fields left out, from the row's studies columns), the references only where the version is
-- shown exactly, and for a reconstruction the date of the version it was made from.
CREATE OR REPLACE MACRO card_json(card_head, references_json, reconstructed_from, overall_status, why_stopped,
                                  results_posted, as_of_exact, enrollment, start_date, completion_date, withheld) AS
    card_head
    || ',"overall_status":' || coalesce(to_json(overall_status)::VARCHAR, 'null')
    || ',"why_stopped":' || coalesce(to_json(why_stopped)::VARCHAR, 'null')
    || ',"results_posted":' || coalesce(to_json(results_posted)::VARCHAR, 'null')
    || ',"enrollment":' || coalesce(enrollment::VARCHAR, 'null')
    || ',"start_date":' || coalesce(to_json(start_date)::VARCHAR, 'null')
    || ',"completion_date":' || coalesce(to_json(completion_date)::VARCHAR, 'null')
    || ',"references":' || CASE WHEN as_of_exact THEN references_json ELSE '[]' END
    || ',"as_of_exact":' || coalesce(to_json(as_of_exact)::VARCHAR, 'null')
    || ',"reconstructed_from":' || coalesce('"' || strftime(reconstructed_from, '%Y-%m-%d') || '"', 'null')
    -- the studies' names as the Trial's, by text (no lambdas: they cost every call's planning): the study's
    -- completion date, always last, is not a Trial field; its primary completion date is `completion_date`
    || ',"withheld":' || coalesce(replace(replace(replace(to_json(withheld)::VARCHAR, ',"completion_date"', ''),
                                                  '["completion_date"]', '[]'),
                                          '"primary_completion_date"', '"completion_date"'), '[]') || '}';

-- card_conditions(card_head): the conditions of a version's card head (trial_text.card_head, the record's list in its
-- order), as written.
CREATE OR REPLACE MACRO card_conditions(card_head) AS from_json((card_head || '}') -> '$.conditions', '["VARCHAR"]');

-- trial_of(card): a trial card's JSON (card_json) as the contract's Trial, one column a field.
CREATE OR REPLACE MACRO trial_of(card) AS from_json(card, '{
    "nct_id": "VARCHAR", "title": "VARCHAR", "brief_summary": "VARCHAR", "phase": "VARCHAR",
    "overall_status": "VARCHAR", "why_stopped": "VARCHAR", "conditions": ["VARCHAR"],
    "interventions": [{"intervention_type": "VARCHAR", "intervention_name": "VARCHAR", "description": "VARCHAR"}],
    "sponsor": "VARCHAR", "collaborators": ["VARCHAR"], "enrollment": "BIGINT", "start_date": "VARCHAR",
    "completion_date": "VARCHAR", "study_type": "VARCHAR",
    "primary_outcomes": [{"measure": "VARCHAR", "time_frame": "VARCHAR"}], "results_posted": "BOOLEAN",
    "references": ["VARCHAR"], "phases": ["VARCHAR"], "as_of_exact": "BOOLEAN", "reconstructed_from": "VARCHAR",
    "withheld": ["VARCHAR"], "version": "VARCHAR"
}');

-- stopped_trial_of(card): a stopped_card's JSON as get_terminated's TerminatedTrial, one column a field.
CREATE OR REPLACE MACRO stopped_trial_of(card) AS from_json(card, '{
    "nct_id": "VARCHAR", "title": "VARCHAR", "drug_name": "VARCHAR", "condition": "VARCHAR", "phase": "VARCHAR",
    "why_stopped": "VARCHAR", "stop_category": "VARCHAR", "enrollment": "BIGINT", "sponsor": "VARCHAR",
    "start_date": "VARCHAR", "termination_date": "VARCHAR", "references": ["VARCHAR"], "status": "VARCHAR",
    "as_of_exact": "BOOLEAN", "reconstructed_from": "VARCHAR", "withheld": ["VARCHAR"], "version": "VARCHAR"
}');

-- trials_as_of(as_of): the trial_card rows a strict answer on as_of shows, one per study first posted by then (NULL:
-- the current state's): the registry as it stood on a date, for analysts' SQL.
CREATE OR REPLACE MACRO trials_as_of(as_of) AS TABLE
SELECT * FROM trial_card WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, as_of,
                                         as_of_exact := as_of_exact);

-- studies_as_of(as_of): the `studies` table as a strict answer on as_of shows it (NULL: the current state), in
-- its own column names and types: one row per study first posted by then, from the version shown then, with the
-- values a cutoff changes as of that day (overall_status, why_stopped, has_results, the results' first post date,
-- the last update's date, as_of_exact, a removal from the registry by then) and what it withholds left out, with
-- its raw text, precision and type, and named in `withheld` (see sql/index/00_version_epoch.sql).
CREATE OR REPLACE MACRO studies_as_of(as_of) AS TABLE
SELECT s.* REPLACE (
    nullif(t.overall_status, '') AS overall_status, t.why_stopped AS why_stopped, t.results_posted AS has_results,
    t.results_first_post_date AS results_first_post_date,
    CASE WHEN t.results_first_post_date IS NOT NULL THEN s.results_first_post_date_raw END
        AS results_first_post_date_raw,
    CASE WHEN t.results_first_post_date IS NOT NULL THEN s.results_first_post_date_precision END
        AS results_first_post_date_precision,
    CASE WHEN t.results_first_post_date IS NOT NULL THEN s.results_first_post_date_type END
        AS results_first_post_date_type,
    t.last_update_post_date AS last_update_post_date,
    CASE WHEN t.last_update_post_date IS NOT DISTINCT FROM s.last_update_post_date THEN s.last_update_post_date_raw
         ELSE strftime(t.last_update_post_date, '%Y-%m-%d') END AS last_update_post_date_raw,
    CASE WHEN t.last_update_post_date IS NOT DISTINCT FROM s.last_update_post_date
         THEN s.last_update_post_date_precision ELSE 'day' END AS last_update_post_date_precision,
    t.enrollment AS enrollment, t.enrollment_type AS enrollment_type,
    t.start_day AS start_date, t.start_date AS start_date_raw,
    CASE WHEN t.start_date IS NOT NULL THEN s.start_date_precision END AS start_date_precision,
    CASE WHEN t.start_date IS NOT NULL THEN s.start_date_type END AS start_date_type,
    t.completion_day AS primary_completion_date, t.completion_date AS primary_completion_date_raw,
    CASE WHEN t.completion_date IS NOT NULL THEN s.primary_completion_date_precision END
        AS primary_completion_date_precision,
    CASE WHEN t.completion_date IS NOT NULL THEN s.primary_completion_date_type END AS primary_completion_date_type,
    CASE WHEN NOT list_contains(t.withheld, 'completion_date') THEN s.completion_date END AS completion_date,
    t.study_completion_date AS completion_date_raw,
    CASE WHEN t.study_completion_date IS NOT NULL THEN s.completion_date_precision END AS completion_date_precision,
    CASE WHEN t.study_completion_date IS NOT NULL THEN s.completion_date_type END AS completion_date_type),
    r.removed_on AS removed_from_registry_on, r.merged_into AS merged_into_nct_id, t.as_of_exact,
    t.reconstructed_from, t.withheld
FROM trials_as_of(as_of) AS t
JOIN all_studies AS s USING (nct_id, content_hash)
LEFT JOIN registry_removals AS r ON r.nct_id = t.nct_id AND (as_of IS NULL OR r.removed_on <= as_of);
