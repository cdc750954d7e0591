-- search_hit: which version of a study (version_no) has which text (text_id) in which of a field's areas
-- (area_mask: bit area_id - 1 set for each area). One row per field, text and version rather than per area, so a
-- query joins and groups a third of the rows; sorted by field first, so a query's constant field prunes the other
-- fields' row groups before its texts are joined. Which version a call sees is trial_card's choice (shown_at).
CREATE TABLE search_hit AS
SELECT a.field, t.text_id::INTEGER AS text_id, v.version_no,
       bit_or((1::UINTEGER << (a.area_id - 1))::UINTEGER) AS area_mask
FROM all_search_terms AS s
JOIN search_area AS a USING (area)
JOIN search_text AS t ON t.norm = s.norm
JOIN study_version AS v USING (nct_id, content_hash)
GROUP BY a.field, t.text_id, v.version_no
ORDER BY a.field, t.text_id, v.version_no;
-- condition_mask_score, intervention_mask_score, term_mask_score: the score of every combination of a field's
-- areas (the sum of their weights, a DECIMAL(18, 2): the sum's own DECIMAL(38, 2) is stored as 128-bit integers,
-- whose decompression took 7 ms for the term field's 16,384 rows of 14 lanes then), so a study's score is one
-- lookup of the areas it matched; the empty combination (0) scores 0, so a match that has no areas of one kind (no
-- phrase, no scattered words) is an inner join too, which DuckDB estimates tightly. A table a field, read as one by
-- the macro area_mask_score() (sql/methods/_matching.sql): a lookup of one field plans the others' tables away (their
-- field column's statistics say no row matches), and its estimate counts its own rows alone. BasicSearch's 16 lanes
-- make 65,536 combinations, which in one table with the others' had every condition's or drug's lookup scan them;
-- the intervention's 2,048 (11 lanes), in one table with the condition's 128, had DuckDB estimate a condition's
-- matches 40 times over and look trial_card up the other way round.
CREATE OR REPLACE TEMP MACRO mask_scores(field_names) AS TABLE
WITH field_areas AS (  -- a lane's areas weigh alike (sql/index/01_search_area.sql): the lane counts once
    SELECT field, list(area_id ORDER BY area_id) AS ids, list(weight ORDER BY area_id) AS weights
    FROM (SELECT DISTINCT field, area_id, weight FROM search_area WHERE list_contains(field_names, field))
    GROUP BY field
),
subsets AS (SELECT field, ids, weights, unnest(range(0, 1 << len(ids))) AS pick FROM field_areas)
SELECT field,
       list_sum(list_transform(range(len(ids)), i -> CASE WHEN (pick >> i) & 1 = 1
                                                           THEN (1::UINTEGER << (ids[i + 1] - 1))::UINTEGER
                                                           ELSE 0::UINTEGER END))::UINTEGER AS area_mask,
       list_sum(list_transform(range(len(ids)), i -> CASE WHEN (pick >> i) & 1 = 1 THEN weights[i + 1] ELSE 0 END))
           ::DECIMAL(18, 2) AS score
FROM subsets
ORDER BY field, area_mask;
CREATE TABLE condition_mask_score AS FROM mask_scores(['condition']);
CREATE TABLE intervention_mask_score AS FROM mask_scores(['intervention']);
CREATE TABLE term_mask_score AS FROM mask_scores(['term']);
