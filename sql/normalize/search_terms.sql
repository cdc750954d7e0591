-- search_terms: every searchable text of a study version, normalised once (search_norm), with the registry's
-- search area it belongs to. The catalog's search index is built from the current versions' rows.
-- key: nct_id, content_hash, area, norm
WITH v AS (SELECT nct_id, content_hash, d.protocolSection AS ps, d.derivedSection AS ds FROM new_versions),
texts AS (
    SELECT nct_id, content_hash, 'NCTId' AS area, nct_id AS text FROM v
    UNION ALL SELECT nct_id, content_hash, 'Acronym', ps.identificationModule.acronym FROM v
    UNION ALL SELECT nct_id, content_hash, 'BriefTitle', ps.identificationModule.briefTitle FROM v
    UNION ALL SELECT nct_id, content_hash, 'OfficialTitle', ps.identificationModule.officialTitle FROM v
    UNION ALL SELECT nct_id, content_hash, 'BriefSummary', ps.descriptionModule.briefSummary FROM v
    UNION ALL SELECT nct_id, content_hash, 'Condition', unnest(ps.conditionsModule.conditions) FROM v
    UNION ALL SELECT nct_id, content_hash, 'Keyword', unnest(ps.conditionsModule.keywords) FROM v
    UNION ALL SELECT nct_id, content_hash, 'ConditionMeshTerm',
                     unnest(list_transform(ds.conditionBrowseModule.meshes, m -> m.term)) FROM v
    UNION ALL SELECT nct_id, content_hash, 'ConditionAncestorTerm',
                     unnest(list_transform(ds.conditionBrowseModule.ancestors, m -> m.term)) FROM v
    UNION ALL SELECT nct_id, content_hash, 'InterventionName',
                     unnest(list_transform(ps.armsInterventionsModule.interventions, i -> i.name)) FROM v
    UNION ALL SELECT nct_id, content_hash, 'InterventionOtherName',
                     unnest(flatten(list_transform(ps.armsInterventionsModule.interventions,
                                                   i -> coalesce(i.otherNames, [])))) FROM v
    UNION ALL SELECT nct_id, content_hash, 'ArmGroupLabel',
                     unnest(list_transform(ps.armsInterventionsModule.armGroups, a -> a.label)) FROM v
    UNION ALL SELECT nct_id, content_hash, 'ArmGroupDescription',
                     unnest(list_transform(ps.armsInterventionsModule.armGroups, a -> a.description)) FROM v
    UNION ALL SELECT nct_id, content_hash, 'InterventionMeshTerm',
                     unnest(list_transform(ds.interventionBrowseModule.meshes, m -> m.term)) FROM v
    UNION ALL SELECT nct_id, content_hash, 'InterventionAncestorTerm',
                     unnest(list_transform(ds.interventionBrowseModule.ancestors, m -> m.term)) FROM v
),
-- Each distinct text is normalised once: MeSH terms, ancestors and common conditions repeat across studies.
normalised AS (
    SELECT text, search_norm(text) AS norm
    FROM (SELECT DISTINCT text FROM texts WHERE text IS NOT NULL AND trim(text) <> '')
)
SELECT DISTINCT t.nct_id, t.content_hash, t.area, n.norm
FROM texts AS t
JOIN normalised AS n USING (text)
