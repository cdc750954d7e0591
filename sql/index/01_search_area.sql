-- search_area: each search area of each field, with its weight: the v2 API's documented areas and weights of
-- ConditionSearch (query.cond: `condition`), InterventionSearch (query.intr: `intervention`) and BasicSearch
-- (query.term: `term`, search's free text), for the areas held as text in the index. Enumerations (intervention
-- and arm group types, phases, age groups, the design's) are texts of the words the registry displays them with
-- (enum_search_text). Not here: BasicSearch's outcome descriptions, results' outcome titles, biospecimen
-- description, officials, contacts, responsible party and sites (LocationSearch reads sites: places.sql), and the
-- organisation's and secondary study IDs, which study_identifier holds (13_study_identifier.sql). area_id numbers
-- a field's lanes from 1 (bit area_id - 1 of its masks): at most 16 a field, the bits sql/methods/_matching.sql's
-- packed_areas gives each way of matching. An area is its own lane but where areas of one weight share one (lane):
-- those that no AREA[...] reads from the field (their AREA[...] reads another field, or the records), so
-- BasicSearch's 30 areas take 16 bits.
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
    ('ArmGroupDescription', 'intervention', 0.4, NULL), ('InterventionDescription', 'intervention', 0.4, NULL),
    ('InterventionType', 'intervention', 0.85, 'InterventionType'),
    ('ArmGroupType', 'intervention', 0.85, 'InterventionType'),
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
    ('CollaboratorName', 'term', 0.25, 'AncestorTerm'),
    ('Phase', 'term', 0.65, 'Phase'), ('StdAge', 'term', 0.65, 'Phase'),
    ('InterventionType', 'term', 0.35, 'InterventionType'), ('ArmGroupType', 'term', 0.35, 'InterventionType'),
    ('DesignAllocation', 'term', 0.3, 'MeshTerm'), ('DesignInterventionModel', 'term', 0.3, 'MeshTerm'),
    ('DesignMasking', 'term', 0.3, 'MeshTerm'), ('DesignWhoMasked', 'term', 0.3, 'MeshTerm'),
    ('DesignObservationalModel', 'term', 0.3, 'MeshTerm'), ('DesignPrimaryPurpose', 'term', 0.3, 'MeshTerm'),
    ('DesignTimePerspective', 'term', 0.3, 'MeshTerm'), ('StudyType', 'term', 0.3, 'MeshTerm')
) AS t(area, field, weight, lane);
