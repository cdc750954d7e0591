-- The versions holding, in the areas $areas of the search index's field $field (NULL: every area of it), a text
-- chosen by $how, scored by the weights of the areas it was found in:
--   'prefix'      a word that starts with $term (Essie's asthm*, normalised by the caller); search_token is sorted by
--                 word: the range of words from $term is read, not the table;
--   'fullmatch', 'startswith', 'endswith'   Essie's COVERAGE: the term $term (search_norm's form: words between
--                 spaces) is the whole text, its first words or its last (the words written: no concept expansion).
WITH wanted AS (
    SELECT bit_or((1::UINTEGER << (area_id - 1))::UINTEGER) AS mask
    FROM search_area
    WHERE field = $field AND ($areas::VARCHAR[] IS NULL OR list_contains($areas::VARCHAR[], area))
),
texts AS (
    SELECT DISTINCT text_id FROM search_token
    WHERE $how = 'prefix' AND token >= $term::VARCHAR AND starts_with(token, $term::VARCHAR)
    UNION ALL
    SELECT text_id FROM search_text
    WHERE CASE $how WHEN 'fullmatch' THEN norm = $term::VARCHAR WHEN 'startswith' THEN starts_with(norm, $term::VARCHAR)
                    WHEN 'endswith' THEN ends_with(norm, $term::VARCHAR) ELSE false END
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
JOIN area_mask_score() AS s ON s.field = $field AND s.area_mask = m.mask
