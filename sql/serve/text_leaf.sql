-- The versions an Essie term matches in a field of the search index ($field: condition, intervention or term),
-- restricted to the areas $areas (NULL: every area of the field), each scored as the methods score a match
-- (hit_score: the weights of the areas a phrase matched in, or a quarter of those its scattered words were found
-- in). $phrase: the term as query_norm gives it (a leading '"': a quoted phrase), matched as the methods match it
-- (sql/methods/_matching.sql). $expand: concept expansion (synonyms, links taught by the records); $relax: the
-- words may be scattered over the areas. $as_of: the cutoff whose learned links count (NULL: the current state's).
-- {among}: `true`, or, where the term is ANDed with another, a test keeping that term's versions alone, so a broad
-- condition's hits are grouped and scored among a drug's few versions only (ctmirror/server/v2/matcher.py).
WITH wanted AS (
    SELECT bit_or((1::UINTEGER << (area_id - 1))::UINTEGER) AS mask
    FROM search_area
    WHERE field = $field AND ($areas::VARCHAR[] IS NULL OR list_contains($areas::VARCHAR[], area))
),
packed AS (
    SELECT version_no, bit_or(area_mask & within_packed((SELECT mask FROM wanted))) AS packed
    FROM field_hit_rows_many($field, [$phrase::VARCHAR], [$as_of::DATE], expand := $expand::BOOLEAN,
                             relax := $relax::BOOLEAN, within := (SELECT mask FROM wanted))
    WHERE area_mask & within_packed((SELECT mask FROM wanted)) <> 0
      AND {among}
    GROUP BY version_no
),
matched AS (
    SELECT version_no, phrase_mask(packed, (SELECT mask FROM concept_merged($field))) AS phrase_mask,
           scattered_areas(packed) AS word_mask
    FROM packed
)
SELECT m.version_no,
       hit_score(m.phrase_mask, c.by_mask[coalesce(m.phrase_mask, 0) + 1], c.by_mask[coalesce(m.word_mask, 0) + 1])
           AS score
FROM matched AS m, (SELECT scores_by_mask($field) AS by_mask) AS c
WHERE $field <> 'term'
UNION ALL  -- the free text's 65,536 combinations by joins ($field is a literal: one branch is planned away)
SELECT m.version_no, hit_score(m.phrase_mask, p.score, w.score) AS score
FROM matched AS m
JOIN area_mask_score() AS p ON p.field = $field AND p.area_mask = coalesce(m.phrase_mask, 0)
JOIN area_mask_score() AS w ON w.field = $field AND w.area_mask = coalesce(m.word_mask, 0)
WHERE $field = 'term'
