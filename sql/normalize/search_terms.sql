-- search_terms: every searchable text of a study version, normalised once (search_norm), with the registry's
-- search area it belongs to. The catalog's search index is built from the current versions' rows.
-- key: nct_id, content_hash, area, norm
-- One pass over the versions: each one's texts as a list of (area, text), unnested once, rather than a scan per
-- area.
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
-- Each distinct text is normalised once: MeSH terms, ancestors and common conditions repeat across studies.
normalised AS (
    SELECT text, search_norm(text) AS norm
    FROM (SELECT DISTINCT text FROM texts WHERE text IS NOT NULL AND trim(text) <> '')
)
SELECT DISTINCT t.nct_id, t.content_hash, t.area, n.norm
FROM texts AS t
JOIN normalised AS n USING (text)
