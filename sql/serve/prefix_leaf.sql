-- The versions holding a word that starts with $prefix (Essie's asthm*, normalised by the caller) in the areas
-- $areas of the search index's field $field (NULL: every area of it), scored by the weights of the areas it was
-- found in. search_token is sorted by word: the range of words from $prefix is read, not the table.
WITH wanted AS (
    SELECT bit_or((1::UINTEGER << (area_id - 1))::UINTEGER) AS mask
    FROM search_area
    WHERE field = $field AND ($areas::VARCHAR[] IS NULL OR list_contains($areas::VARCHAR[], area))
),
texts AS (
    SELECT DISTINCT text_id FROM search_token
    WHERE token >= $prefix::VARCHAR AND starts_with(token, $prefix::VARCHAR)
),
matched AS (
    SELECT h.version_no, bit_or(h.area_mask & (SELECT mask FROM wanted)) AS mask
    FROM search_hit AS h
    JOIN texts USING (text_id)
    WHERE h.field = $field AND h.area_mask & (SELECT mask FROM wanted) <> 0
    GROUP BY h.version_no
)
SELECT m.version_no, s.score
FROM matched AS m
JOIN area_mask_score AS s ON s.field = $field AND s.area_mask = m.mask
