-- search_source: every searchable text of every current study, with the search field and the registry's
-- area and weight (query.cond areas and weights as documented for the v2 API; query.intr areas as documented,
-- weights ours). Temporary: the index tables below are built from it.
CREATE TEMP TABLE search_source AS
SELECT nct_id, 'condition' AS field, 'Condition' AS area, 0.95 AS weight, condition AS text FROM conditions
UNION ALL SELECT nct_id, 'condition', 'BriefTitle', 0.6, brief_title FROM studies
UNION ALL SELECT nct_id, 'condition', 'OfficialTitle', 0.55, official_title FROM studies
UNION ALL SELECT nct_id, 'condition', 'ConditionMeshTerm', 0.5, term FROM mesh_terms WHERE domain = 'condition' AND NOT is_ancestor
UNION ALL SELECT nct_id, 'condition', 'ConditionAncestorTerm', 0.4, term FROM mesh_terms WHERE domain = 'condition' AND is_ancestor
UNION ALL SELECT nct_id, 'condition', 'Keyword', 0.3, keyword FROM keywords
UNION ALL SELECT nct_id, 'intervention', 'InterventionName', 0.95, name FROM interventions
UNION ALL SELECT nct_id, 'intervention', 'InterventionOtherName', 0.9, unnest(other_names) FROM interventions
UNION ALL SELECT nct_id, 'intervention', 'InterventionMeshTerm', 0.5, term FROM mesh_terms WHERE domain = 'intervention' AND NOT is_ancestor
UNION ALL SELECT nct_id, 'intervention', 'ArmGroupLabel', 0.45, label FROM arm_groups
UNION ALL SELECT nct_id, 'intervention', 'ArmGroupDescription', 0.45, description FROM arm_groups
UNION ALL SELECT nct_id, 'intervention', 'InterventionAncestorTerm', 0.4, term FROM mesh_terms WHERE domain = 'intervention' AND is_ancestor
-- query.term (the free-text `query` of search): the BasicSearch areas with text worth matching.
UNION ALL SELECT nct_id, 'term', 'NCTId', 1.0, nct_id FROM studies
UNION ALL SELECT nct_id, 'term', 'Acronym', 1.0, acronym FROM studies
UNION ALL SELECT nct_id, 'term', 'BriefTitle', 0.89, brief_title FROM studies
UNION ALL SELECT nct_id, 'term', 'OfficialTitle', 0.85, official_title FROM studies
UNION ALL SELECT nct_id, 'term', 'Condition', 0.81, condition FROM conditions
UNION ALL SELECT nct_id, 'term', 'InterventionName', 0.8, name FROM interventions
UNION ALL SELECT nct_id, 'term', 'InterventionOtherName', 0.75, unnest(other_names) FROM interventions
UNION ALL SELECT nct_id, 'term', 'Keyword', 0.6, keyword FROM keywords
UNION ALL SELECT nct_id, 'term', 'BriefSummary', 0.6, brief_summary FROM studies;
