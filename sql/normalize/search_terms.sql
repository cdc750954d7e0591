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
                       o -> {'area': 'SecondaryOutcomeMeasure', 'text': o.measure}),
        [{'area': 'BioSpecDescription', 'text': ps.designModule.bioSpec.description},
         {'area': 'ResponsiblePartyInvestigatorFullName', 'text': rp.investigatorFullName},
         {'area': 'ResponsiblePartyInvestigatorTitle', 'text': rp.investigatorTitle},
         {'area': 'ResponsiblePartyInvestigatorAffiliation', 'text': rp.investigatorAffiliation},
         {'area': 'ResponsiblePartyOldNameTitle', 'text': rp.oldNameTitle},
         {'area': 'ResponsiblePartyOldOrganization', 'text': rp.oldOrganization}],
        list_transform(ps.contactsLocationsModule.overallOfficials,
                       o -> {'area': 'OverallOfficialName', 'text': o.name}),
        list_transform(ps.contactsLocationsModule.overallOfficials,
                       o -> {'area': 'OverallOfficialAffiliation', 'text': o.affiliation}),
        list_transform(ps.contactsLocationsModule.centralContacts,
                       c -> {'area': 'CentralContactName', 'text': c.name}),
        -- enumerations, by the words the registry displays them with (enum_search_text)
        list_transform(ps.contactsLocationsModule.overallOfficials,
                       o -> {'area': 'OverallOfficialRole', 'text': enum_search_text('OverallOfficialRole', o.role)}),
        list_transform(ps.armsInterventionsModule.interventions,
                       i -> {'area': 'InterventionType', 'text': enum_search_text('InterventionType', i.type)}),
        list_transform(ps.armsInterventionsModule.armGroups,
                       a -> {'area': 'ArmGroupType', 'text': enum_search_text('ArmGroupType', a.type)}),
        list_transform(ps.designModule.phases, v -> {'area': 'Phase', 'text': enum_search_text('Phase', v)}),
        list_transform(ps.eligibilityModule.stdAges, v -> {'area': 'StdAge', 'text': enum_search_text('StdAge', v)}),
        list_transform(ps.designModule.designInfo.maskingInfo.whoMasked,
                       v -> {'area': 'DesignWhoMasked', 'text': enum_search_text('DesignWhoMasked', v)}),
        list_transform([['StudyType', ps.designModule.studyType],
                        ['DesignAllocation', ps.designModule.designInfo.allocation],
                        ['DesignInterventionModel', ps.designModule.designInfo.interventionModel],
                        ['DesignMasking', ps.designModule.designInfo.maskingInfo.masking],
                        ['DesignObservationalModel', ps.designModule.designInfo.observationalModel],
                        ['DesignPrimaryPurpose', ps.designModule.designInfo.primaryPurpose],
                        ['DesignTimePerspective', ps.designModule.designInfo.timePerspective]],
                       e -> {'area': e[1], 'text': enum_search_text(e[1], e[2])})
    ), recursive := true)
    FROM (SELECT nct_id, content_hash, d.protocolSection AS ps, d.derivedSection AS ds,
                 d.protocolSection.sponsorCollaboratorsModule.responsibleParty AS rp
          FROM new_versions)
),
-- Each distinct text is normalised once: MeSH terms, ancestors and common conditions repeat across studies.
normalised AS (
    SELECT text, search_norm(text) AS norm
    FROM (SELECT DISTINCT text FROM texts WHERE text IS NOT NULL AND trim(text) <> '')
)
SELECT DISTINCT t.nct_id, t.content_hash, t.area, n.norm
FROM texts AS t
JOIN normalised AS n USING (text)
