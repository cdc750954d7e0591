-- How the Python API calls get_trial_details, for one ID or a batch (its arguments' table, which this reads):
-- each found trial's card with its details merged in, as JSON, by the ID's position k. Planned once per
-- connection, then executed.
SELECT k, json_merge_patch(card, to_json({
    'eligibility_criteria': eligibility_criteria, 'minimum_age': minimum_age, 'maximum_age': maximum_age,
    'sex': sex, 'healthy_volunteers': healthy_volunteers, 'std_ages': std_ages, 'locations': locations,
    'keywords': keywords, 'condition_mesh_terms': condition_mesh_terms,
    'condition_ancestor_terms': condition_ancestor_terms, 'intervention_mesh_terms': intervention_mesh_terms
}))::VARCHAR AS card
FROM get_trial_details_many((SELECT nct_id FROM get_trial_details_args), (SELECT as_of FROM get_trial_details_args))
