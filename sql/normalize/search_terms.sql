-- search_terms: every searchable text of a study version, normalised once (search_norm), with the registry's
-- search area it belongs to. The catalog's search index is built from the current versions' rows.
-- key: nct_id, content_hash, area, norm
-- One pass over the versions: each one's texts as a list of (area, text), unnested once, rather than a scan per
-- area; and one for the enumerations' values (area, code), whose few distinct values are then spelled out.
WITH texts AS (
    SELECT nct_id, content_hash, unnest(list_concat(
        [{'area': 'NCTId', 'text': nct_id},
         {'area': 'Acronym', 'text': ps.identificationModule.acronym},
         {'area': 'BriefTitle', 'text': ps.identificationModule.briefTitle},
         {'area': 'OfficialTitle', 'text': ps.identificationModule.officialTitle},
         {'area': 'BriefSummary', 'text': ps.descriptionModule.briefSummary},
         {'area': 'OrgStudyId', 'text': ps.identificationModule.orgStudyIdInfo.id},
         {'area': 'LeadSponsorName', 'text': ps.sponsorCollaboratorsModule.leadSponsor.name}],
        list_transform(ps.identificationModule.secondaryIdInfos, s -> {'area': 'SecondaryId', 'text': s.id}),
        list_transform(ps.conditionsModule.conditions, c -> {'area': 'Condition', 'text': c}),
        list_transform(ps.conditionsModule.keywords, k -> {'area': 'Keyword', 'text': k}),
        list_transform(ds.conditionBrowseModule.meshes, m -> {'area': 'ConditionMeshTerm', 'text': m.term}),
        list_transform(ds.conditionBrowseModule.ancestors, m -> {'area': 'ConditionAncestorTerm', 'text': m.term}),
        list_transform(ps.armsInterventionsModule.interventions, i -> {'area': 'InterventionName', 'text': i.name}),
        list_transform(flatten(list_transform(ps.armsInterventionsModule.interventions,
                                              i -> coalesce(i.otherNames, []))),
                       o -> {'area': 'InterventionOtherName', 'text': o}),
        list_transform(ps.armsInterventionsModule.armGroups, a -> {'area': 'ArmGroupLabel', 'text': a.label}),
        list_transform(ps.armsInterventionsModule.armGroups,
                       a -> {'area': 'ArmGroupDescription', 'text': a.description}),
        list_transform(ds.interventionBrowseModule.meshes, m -> {'area': 'InterventionMeshTerm', 'text': m.term}),
        list_transform(ds.interventionBrowseModule.ancestors,
                       m -> {'area': 'InterventionAncestorTerm', 'text': m.term}),
        list_transform(ps.armsInterventionsModule.interventions,
                       i -> {'area': 'InterventionDescription', 'text': i.description}),
        list_transform(ps.sponsorCollaboratorsModule.collaborators, c -> {'area': 'CollaboratorName', 'text': c.name}),
        list_transform(ps.outcomesModule.primaryOutcomes, o -> {'area': 'PrimaryOutcomeMeasure', 'text': o.measure}),
        list_transform(ps.outcomesModule.secondaryOutcomes,
                       o -> {'area': 'SecondaryOutcomeMeasure', 'text': o.measure})
    ), recursive := true)
    FROM (SELECT nct_id, content_hash, d.protocolSection AS ps, d.derivedSection AS ds FROM new_versions)
),
-- Enumerations, by the words the registry displays them with (enum_search_text), each distinct value once.
enums AS (
    SELECT nct_id, content_hash, unnest(list_concat(
        list_transform(ps.armsInterventionsModule.interventions, i -> {'area': 'InterventionType', 'code': i.type}),
        list_transform(ps.armsInterventionsModule.armGroups, a -> {'area': 'ArmGroupType', 'code': a.type}),
        list_transform(ps.designModule.phases, v -> {'area': 'Phase', 'code': v}),
        list_transform(ps.eligibilityModule.stdAges, v -> {'area': 'StdAge', 'code': v}),
        list_transform(ps.designModule.designInfo.maskingInfo.whoMasked, v -> {'area': 'DesignWhoMasked', 'code': v}),
        [{'area': 'StudyType', 'code': ps.designModule.studyType},
         {'area': 'DesignAllocation', 'code': ps.designModule.designInfo.allocation},
         {'area': 'DesignInterventionModel', 'code': ps.designModule.designInfo.interventionModel},
         {'area': 'DesignMasking', 'code': ps.designModule.designInfo.maskingInfo.masking},
         {'area': 'DesignObservationalModel', 'code': ps.designModule.designInfo.observationalModel},
         {'area': 'DesignPrimaryPurpose', 'code': ps.designModule.designInfo.primaryPurpose},
         {'area': 'DesignTimePerspective', 'code': ps.designModule.designInfo.timePerspective}]
    ), recursive := true)
    FROM (SELECT nct_id, content_hash, d.protocolSection AS ps FROM new_versions)
),
enum_norms AS (
    SELECT area, code, search_norm(enum_search_text(area, code)) AS norm
    FROM (SELECT DISTINCT area, code FROM enums WHERE code IS NOT NULL)
),
-- Each distinct text is normalised once: MeSH terms, ancestors and common conditions repeat across studies.
normalised AS (
    SELECT text, search_norm(text) AS norm
    FROM (SELECT DISTINCT text FROM texts WHERE text IS NOT NULL AND trim(text) <> '')
)
SELECT DISTINCT t.nct_id, t.content_hash, t.area, n.norm
FROM texts AS t
JOIN normalised AS n USING (text)
UNION ALL  -- an enumeration's area is no text's
SELECT DISTINCT e.nct_id, e.content_hash, e.area, n.norm
FROM enums AS e
JOIN enum_norms AS n USING (area, code)
