-- How many elements one list field ($field, a piece name of ctmirror/server/field_stats.py's SIZE_SQL) has in each
-- study shown at $as_of: (version_no, size), 0 for a study without the list. /api/v2/stats/field/sizes counts
-- them (field_sizes.sql) and AREA[$field:size] tests them (ctmirror/server/v2/record_areas.py).
WITH shown AS (
    SELECT t.version_no, CASE $field WHEN 'Phase' THEN len(t.phases) WHEN 'StdAge' THEN len(t.std_ages)
                                     WHEN 'Intervention' THEN len(t.interventions) END AS card_size
    FROM trial_card AS t
    WHERE shown_at(t.valid_from, t.valid_to, t.is_current, t.study_first_post_date, NULL, $as_of::DATE,
                   as_of_exact := t.as_of_exact)
)
SELECT s.version_no,
       coalesce(CASE $field WHEN 'Location' THEN len(d.locations) WHEN 'Keyword' THEN len(d.keywords)
                            WHEN 'ConditionMesh' THEN len(d.condition_mesh_terms) ELSE s.card_size END, 0) AS size
FROM shown AS s
LEFT JOIN trial_detail AS d ON $field IN ('Location', 'Keyword', 'ConditionMesh') AND d.version_no = s.version_no
