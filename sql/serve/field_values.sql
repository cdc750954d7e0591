-- /api/v2/stats/field/values: the values of one field the catalog holds ($field: a piece name of
-- ctmirror/server/field_stats.py's VALUE_SQL) over the studies shown at $as_of, with how many studies have each
-- and the first of them by NCT ID, and how many have none (value NULL).
WITH shown AS (
    SELECT CASE $field WHEN 'OverallStatus' THEN [nullif(overall_status, '')] WHEN 'Phase' THEN phases
                       WHEN 'StudyType' THEN [study_type] WHEN 'Sex' THEN [sex] WHEN 'StdAge' THEN std_ages
                       WHEN 'LeadSponsorClass' THEN [sponsor_class] WHEN 'LeadSponsorName' THEN [nullif(sponsor, '')]
                       END AS texts,
           nct_id
    FROM trial_card
    WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, $as_of::DATE,
                   as_of_exact := as_of_exact)
),
values_of AS (
    SELECT unnest(CASE WHEN coalesce(len(list_filter(texts, t -> t IS NOT NULL)), 0) = 0 THEN [NULL::VARCHAR]
                       ELSE list_distinct(list_filter(texts, t -> t IS NOT NULL)) END) AS value, nct_id
    FROM shown
)
SELECT value, count(*) AS studies, min(nct_id) AS first_nct_id
FROM values_of GROUP BY value ORDER BY studies DESC, value NULLS LAST
