-- card_json(card_head, references_json, overall_status, why_stopped, results_posted, as_of_exact): the contract's
-- Trial as JSON, from a version's trial_text and the trial_card row a call shows (what its cutoff changes; the
-- references only where the version is shown exactly).
CREATE OR REPLACE MACRO card_json(card_head, references_json, overall_status, why_stopped, results_posted,
                                  as_of_exact) AS
    card_head
    || ',"overall_status":' || coalesce(to_json(overall_status)::VARCHAR, 'null')
    || ',"why_stopped":' || coalesce(to_json(why_stopped)::VARCHAR, 'null')
    || ',"results_posted":' || coalesce(to_json(results_posted)::VARCHAR, 'null')
    || ',"references":' || CASE WHEN as_of_exact THEN references_json ELSE '[]' END
    || ',"as_of_exact":' || coalesce(to_json(as_of_exact)::VARCHAR, 'null') || '}';

-- trial_of(card): a trial card's JSON (card_json) as the contract's Trial, one column a field.
CREATE OR REPLACE MACRO trial_of(card) AS from_json(card, '{
    "nct_id": "VARCHAR", "title": "VARCHAR", "brief_summary": "VARCHAR", "phase": "VARCHAR",
    "overall_status": "VARCHAR", "why_stopped": "VARCHAR", "conditions": ["VARCHAR"],
    "interventions": [{"intervention_type": "VARCHAR", "intervention_name": "VARCHAR", "description": "VARCHAR"}],
    "sponsor": "VARCHAR", "collaborators": ["VARCHAR"], "enrollment": "BIGINT", "start_date": "VARCHAR",
    "completion_date": "VARCHAR", "study_type": "VARCHAR",
    "primary_outcomes": [{"measure": "VARCHAR", "time_frame": "VARCHAR"}], "results_posted": "BOOLEAN",
    "references": ["VARCHAR"], "phases": ["VARCHAR"], "as_of_exact": "BOOLEAN", "version": "VARCHAR"
}');

-- stopped_trial_of(card): a stopped_card's JSON as get_terminated's TerminatedTrial, one column a field.
CREATE OR REPLACE MACRO stopped_trial_of(card) AS from_json(card, '{
    "nct_id": "VARCHAR", "title": "VARCHAR", "drug_name": "VARCHAR", "condition": "VARCHAR", "phase": "VARCHAR",
    "why_stopped": "VARCHAR", "stop_category": "VARCHAR", "enrollment": "BIGINT", "sponsor": "VARCHAR",
    "start_date": "VARCHAR", "termination_date": "VARCHAR", "references": ["VARCHAR"], "status": "VARCHAR",
    "as_of_exact": "BOOLEAN", "version": "VARCHAR"
}');

-- trials_as_of(as_of): the trial_card rows a strict answer on as_of shows, one per study first posted by then (NULL:
-- the current state's): the registry as it stood on a date, for analysts' SQL.
CREATE OR REPLACE MACRO trials_as_of(as_of) AS TABLE
SELECT * FROM trial_card WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, as_of);
