-- trial_of(card): a trial card's JSON (trial_card.card) as the contract's Trial, one column a field.
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
