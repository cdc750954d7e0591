-- search_area: each search area of each field, with its weight: the v2 API's documented areas and weights of
-- ConditionSearch (query.cond: `condition`), InterventionSearch (query.intr: `intervention`) and BasicSearch
-- (query.term: `term`, search's free text), for the areas held as text in the index: not the intervention and arm
-- group types for interventions (enumerations: AREA[InterventionType] reads them), nor BasicSearch's outcome
-- descriptions, sites, contacts and design enumerations. The organisation's and secondary study IDs are not here
-- either: study_identifier holds them (13_study_identifier.sql). area_id numbers a field's lanes from 1 (bit
-- area_id - 1 of its masks): fewer than 16 a field, the bits sql/methods/_matching.sql's packed_areas gives each
-- way of matching. An area is its own lane but where BasicSearch's areas of one weight share one (lane): those
-- that no AREA[...] reads from the term field (their AREA[...] reads the condition's or intervention's field, or
-- the records), so BasicSearch's 20 areas take 14 bits.
CREATE TABLE search_area AS
SELECT dense_rank() OVER (PARTITION BY field ORDER BY coalesce(lane, area))::UTINYINT AS area_id, area, field, weight
FROM (VALUES
    ('Condition', 'condition', 0.95, NULL), ('BriefTitle', 'condition', 0.6, NULL),
    ('OfficialTitle', 'condition', 0.55, NULL), ('ConditionMeshTerm', 'condition', 0.5, NULL),
    ('ConditionAncestorTerm', 'condition', 0.4, NULL), ('Keyword', 'condition', 0.3, NULL),
    ('NCTId', 'condition', 0.2, NULL),
    ('InterventionName', 'intervention', 0.95, NULL), ('InterventionOtherName', 'intervention', 0.75, NULL),
    ('BriefTitle', 'intervention', 0.65, NULL), ('OfficialTitle', 'intervention', 0.6, NULL),
    ('ArmGroupLabel', 'intervention', 0.5, NULL), ('InterventionMeshTerm', 'intervention', 0.5, NULL),
    ('Keyword', 'intervention', 0.5, NULL), ('InterventionAncestorTerm', 'intervention', 0.4, NULL),
    ('ArmGroupDescription', 'intervention', 0.4, NULL),
    ('NCTId', 'term', 1.0, NULL), ('Acronym', 'term', 1.0, NULL), ('BriefTitle', 'term', 0.89, NULL),
    ('OfficialTitle', 'term', 0.85, NULL), ('Condition', 'term', 0.81, NULL), ('InterventionName', 'term', 0.8, NULL),
    ('InterventionOtherName', 'term', 0.75, NULL), ('BriefSummary', 'term', 0.6, NULL),
    ('Keyword', 'term', 0.6, 'Keyword'), ('PrimaryOutcomeMeasure', 'term', 0.6, 'Keyword'),
    ('ArmGroupLabel', 'term', 0.5, 'ArmGroupLabel'), ('SecondaryOutcomeMeasure', 'term', 0.5, 'ArmGroupLabel'),
    ('ArmGroupDescription', 'term', 0.45, 'ArmGroupDescription'),
    ('InterventionDescription', 'term', 0.45, 'ArmGroupDescription'),
    ('LeadSponsorName', 'term', 0.4, NULL),
    ('ConditionMeshTerm', 'term', 0.3, 'MeshTerm'), ('InterventionMeshTerm', 'term', 0.3, 'MeshTerm'),
    ('ConditionAncestorTerm', 'term', 0.25, 'AncestorTerm'), ('InterventionAncestorTerm', 'term', 0.25, 'AncestorTerm'),
    ('CollaboratorName', 'term', 0.25, 'AncestorTerm')
) AS t(area, field, weight, lane);
