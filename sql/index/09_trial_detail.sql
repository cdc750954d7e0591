-- trial_detail: one row per current study with what get_trial_details adds to the Trial: eligibility, sites,
-- keywords, MeSH terms; pre-assembled so a lookup reads one row of a table sorted by nct_id.
CREATE TABLE trial_detail AS
WITH
sites AS (
    SELECT nct_id, list({'facility': facility, 'status': status, 'city': city, 'state': state, 'zip': zip,
                         'country': country, 'lat': lat, 'lon': lon} ORDER BY ordinal) AS locations
    FROM locations GROUP BY nct_id),
words AS (SELECT nct_id, list(keyword ORDER BY ordinal) AS keywords FROM keywords GROUP BY nct_id),
mesh AS (
    SELECT nct_id,
           list(term ORDER BY ordinal) FILTER (WHERE domain = 'condition' AND NOT is_ancestor) AS condition_mesh_terms,
           list(term ORDER BY ordinal) FILTER (WHERE domain = 'condition' AND is_ancestor) AS condition_ancestor_terms,
           list(term ORDER BY ordinal) FILTER (WHERE domain = 'intervention' AND NOT is_ancestor) AS intervention_mesh_terms
    FROM mesh_terms GROUP BY nct_id)
SELECT
    s.nct_id, s.eligibility_criteria, s.minimum_age, s.maximum_age, s.sex, s.healthy_volunteers, s.std_ages,
    coalesce(sites.locations, []) AS locations,
    coalesce(words.keywords, []) AS keywords,
    coalesce(mesh.condition_mesh_terms, []) AS condition_mesh_terms,
    coalesce(mesh.condition_ancestor_terms, []) AS condition_ancestor_terms,
    coalesce(mesh.intervention_mesh_terms, []) AS intervention_mesh_terms
FROM studies AS s
LEFT JOIN sites USING (nct_id)
LEFT JOIN words USING (nct_id)
LEFT JOIN mesh USING (nct_id)
ORDER BY s.nct_id;
