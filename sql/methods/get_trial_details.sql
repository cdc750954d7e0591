-- get_trial_details(nct_id): get_trial plus eligibility (criteria text, ages, sex, healthy volunteers),
-- sites, keywords and MeSH terms.
CREATE OR REPLACE MACRO get_trial_details(wanted_id) AS TABLE
WITH t AS (SELECT * FROM get_trial(wanted_id))
SELECT
    t.*,
    s.eligibility_criteria, s.minimum_age, s.maximum_age, s.sex, s.healthy_volunteers, s.std_ages,
    coalesce((SELECT list({'facility': facility, 'status': status, 'city': city, 'state': state, 'zip': zip,
                           'country': country, 'lat': lat, 'lon': lon} ORDER BY ordinal)
              FROM locations WHERE nct_id = t.nct_id), []) AS locations,
    coalesce((SELECT list(keyword ORDER BY ordinal) FROM keywords WHERE nct_id = t.nct_id), []) AS keywords,
    coalesce((SELECT list(term ORDER BY ordinal) FROM mesh_terms
              WHERE nct_id = t.nct_id AND domain = 'condition' AND NOT is_ancestor), []) AS condition_mesh_terms,
    coalesce((SELECT list(term ORDER BY ordinal) FROM mesh_terms
              WHERE nct_id = t.nct_id AND domain = 'condition' AND is_ancestor), []) AS condition_ancestor_terms,
    coalesce((SELECT list(term ORDER BY ordinal) FROM mesh_terms
              WHERE nct_id = t.nct_id AND domain = 'intervention' AND NOT is_ancestor), []) AS intervention_mesh_terms
FROM t JOIN studies AS s USING (nct_id);
