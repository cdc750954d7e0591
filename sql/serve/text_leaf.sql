-- The versions an Essie term matches in a field of the search index ($field: condition, intervention or term),
-- restricted to the areas $areas (NULL: every area of the field), each scored as the methods score a match (the
-- sum of the weights of the areas it matched in). $phrase: the term, normalised by the caller (search_norm),
-- matched as the methods match a phrase (whole words in order; for conditions and interventions, its synonyms
-- too). $as_of: the cutoff whose learned condition links count (NULL: the current state's).
WITH wanted AS (
    SELECT bit_or((1::UINTEGER << (area_id - 1))::UINTEGER) AS mask
    FROM search_area
    WHERE field = $field AND ($areas::VARCHAR[] IS NULL OR list_contains($areas::VARCHAR[], area))
),
matched AS (
    SELECT version_no, bit_or(area_mask & (SELECT mask FROM wanted)) AS mask
    FROM field_hit_rows_many($field, [$phrase::VARCHAR], [$as_of::DATE])
    WHERE area_mask & (SELECT mask FROM wanted) <> 0
    GROUP BY version_no
)
SELECT m.version_no, s.score
FROM matched AS m
JOIN area_mask_score AS s ON s.field = $field AND s.area_mask = m.mask
