-- search_area: each search area of each field, with its weight: the v2 API's documented areas and weights of
-- ConditionSearch (query.cond: `condition`), InterventionSearch (query.intr: `intervention`) and BasicSearch
-- (query.term: `term`, search's free text), for the areas held as text in the index: not the intervention and arm
-- group types for interventions (enumerations: AREA[InterventionType] reads them), nor BasicSearch's outcomes,
-- sponsors, locations, contacts and design enumerations. The organisation's and secondary study IDs are not here
-- either: study_identifier holds them (13_study_identifier.sql). area_id numbers a field's areas from 1 (bit
-- area_id - 1 of its masks): fewer than 16 a field, the bits sql/methods/_matching.sql's packed_areas gives each
-- way of matching.
CREATE TABLE search_area AS
SELECT row_number() OVER (PARTITION BY field ORDER BY area)::UTINYINT AS area_id, area, field, weight FROM (VALUES
    ('Condition', 'condition', 0.95), ('BriefTitle', 'condition', 0.6), ('OfficialTitle', 'condition', 0.55),
    ('ConditionMeshTerm', 'condition', 0.5), ('ConditionAncestorTerm', 'condition', 0.4), ('Keyword', 'condition', 0.3),
    ('NCTId', 'condition', 0.2),
    ('InterventionName', 'intervention', 0.95), ('InterventionOtherName', 'intervention', 0.75),
    ('BriefTitle', 'intervention', 0.65), ('OfficialTitle', 'intervention', 0.6),
    ('ArmGroupLabel', 'intervention', 0.5), ('InterventionMeshTerm', 'intervention', 0.5),
    ('Keyword', 'intervention', 0.5), ('InterventionAncestorTerm', 'intervention', 0.4),
    ('ArmGroupDescription', 'intervention', 0.4),
    ('NCTId', 'term', 1.0), ('Acronym', 'term', 1.0), ('BriefTitle', 'term', 0.89), ('OfficialTitle', 'term', 0.85),
    ('Condition', 'term', 0.81), ('InterventionName', 'term', 0.8), ('InterventionOtherName', 'term', 0.75),
    ('Keyword', 'term', 0.6), ('BriefSummary', 'term', 0.6), ('ArmGroupLabel', 'term', 0.5),
    ('ArmGroupDescription', 'term', 0.45), ('ConditionMeshTerm', 'term', 0.3), ('InterventionMeshTerm', 'term', 0.3),
    ('ConditionAncestorTerm', 'term', 0.25), ('InterventionAncestorTerm', 'term', 0.25)
) AS t(area, field, weight);
