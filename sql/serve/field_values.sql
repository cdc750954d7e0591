-- /api/v2/stats/field/values: the values of one field the catalog holds ($field: a piece name of
-- ctmirror/server/v2/field_stats.py's VALUE_SQL) over the studies shown at $as_of, with how many studies have each
-- and the first of them by NCT ID, and how many have none (value NULL). A study's sites, keywords and MeSH terms
-- are those of the version shown (trial_detail), its conditions those of its record (all_conditions).
WITH shown AS (
    SELECT version_no, nct_id, content_hash,
           CASE $field WHEN 'OverallStatus' THEN [nullif(overall_status, '')] WHEN 'Phase' THEN phases
                       WHEN 'StudyType' THEN [study_type] WHEN 'Sex' THEN [sex] WHEN 'StdAge' THEN std_ages
                       WHEN 'LeadSponsorClass' THEN [sponsor_class] WHEN 'LeadSponsorName' THEN [nullif(sponsor, '')]
                       WHEN 'InterventionName' THEN list_transform(interventions, i -> nullif(i.intervention_name, ''))
                       END AS card_texts
    FROM trial_card
    WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, $as_of::DATE,
                   as_of_exact := as_of_exact)
),
conditions AS (
    SELECT nct_id, content_hash, list(condition) AS texts FROM all_conditions
    WHERE $field = 'Condition' GROUP BY nct_id, content_hash
),
texts_of AS (
    SELECT s.nct_id,
           CASE $field WHEN 'LocationCountry' THEN list_transform(d.locations, l -> l.country)
                       WHEN 'LocationCity' THEN list_transform(d.locations, l -> l.city)
                       WHEN 'LocationState' THEN list_transform(d.locations, l -> l.state)
                       WHEN 'LocationFacility' THEN list_transform(d.locations, l -> l.facility)
                       WHEN 'LocationStatus' THEN list_transform(d.locations, l -> l.status)
                       WHEN 'Keyword' THEN d.keywords WHEN 'ConditionMeshTerm' THEN d.condition_mesh_terms
                       WHEN 'ConditionAncestorTerm' THEN d.condition_ancestor_terms
                       WHEN 'InterventionMeshTerm' THEN d.intervention_mesh_terms
                       WHEN 'Condition' THEN c.texts ELSE s.card_texts END AS texts
    FROM shown AS s
    LEFT JOIN trial_detail AS d ON $field IN ('LocationCountry', 'LocationCity', 'LocationState', 'LocationFacility',
                                              'LocationStatus', 'Keyword', 'ConditionMeshTerm',
                                              'ConditionAncestorTerm', 'InterventionMeshTerm')
                               AND d.version_no = s.version_no
    LEFT JOIN conditions AS c ON $field = 'Condition' AND c.nct_id = s.nct_id AND c.content_hash = s.content_hash
),
values_of AS (
    SELECT unnest(CASE WHEN coalesce(len(list_filter(texts, t -> t IS NOT NULL)), 0) = 0 THEN [NULL::VARCHAR]
                       ELSE list_distinct(list_filter(texts, t -> t IS NOT NULL)) END) AS value, nct_id
    FROM texts_of
)
SELECT value, count(*) AS studies, min(nct_id) AS first_nct_id
FROM values_of GROUP BY value ORDER BY studies DESC, value NULLS LAST
