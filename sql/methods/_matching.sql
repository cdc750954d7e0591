-- The matcher shared by every method: phrases and their synonyms → texts (token index) → studies, scored.

-- in_scope(first_posted, date_before): the one place date_before is applied to a trial.
CREATE OR REPLACE MACRO in_scope(first_posted, cutoff) AS
    (cutoff IS NULL OR first_posted <= cutoff::DATE);

-- Every matcher takes a list of queries and answers for each by its position k (from 1), so a backtest's
-- thousands of calls match in one pass over the index; the one-query forms are the list of one.

-- search_phrases_many(field, qs): per query, the normalised query and the phrases of its synonym groups
-- (sql/data/synonyms.csv).
CREATE OR REPLACE MACRO search_phrases_many(field_name, qs) AS TABLE
WITH normed AS (SELECT generate_subscripts(qs, 1) AS k, search_norm(unnest(qs)) AS phrase)
SELECT n.k, unnest(coalesce(s.phrases, [n.phrase])) AS phrase
FROM normed AS n
LEFT JOIN synonym_set AS s ON s.field = field_name AND s.phrase = n.phrase
WHERE length(trim(n.phrase)) > 0;

CREATE OR REPLACE MACRO search_phrases(field_name, q) AS TABLE
SELECT phrase FROM search_phrases_many(field_name, [q]);

-- matched_texts_many(field, qs): per query, the texts holding one of its phrases as whole words: each of the
-- phrase's words at consecutive positions (what contains(norm, phrase) would find, read from the narrow
-- token table alone). A text holding two of the phrases comes twice: every use of these rows merges them (a
-- DISTINCT here cost every call half a millisecond).
CREATE OR REPLACE MACRO matched_texts_many(field_name, qs) AS TABLE
WITH words AS (
    SELECT k, phrase, len(words) AS word_count, unnest(words) AS word, generate_subscripts(words, 1) AS i
    FROM (SELECT k, phrase, string_split(trim(phrase), ' ') AS words FROM search_phrases_many(field_name, qs))
),
placed AS (
    -- A phrase's word i sits at start + i, one row per word found, so the count of rows is the count of words.
    SELECT w.k, t.text_id
    FROM words AS w
    JOIN search_token AS t ON t.token = w.word
    GROUP BY w.k, w.phrase, w.word_count, t.text_id, t.position - w.i
    HAVING count(*) = w.word_count
)
SELECT k, text_id FROM placed;

CREATE OR REPLACE MACRO matched_texts(field_name, q) AS TABLE
SELECT DISTINCT text_id FROM matched_texts_many(field_name, [q]);

-- field_texts_many(field, qs): per query, the texts whose hits count (text_id) and the areas they count in (keep,
-- a mask): every area of the field for the texts holding a phrase; for conditions, also the MeSH terms learned
-- from those texts (condition_link), in the ConditionMeshTerm area only.
CREATE OR REPLACE MACRO field_texts_many(field_name, qs) AS TABLE
WITH direct AS (SELECT k, text_id FROM matched_texts_many(field_name, qs)),
learned AS (
    SELECT d.k, l.term_text_id AS text_id
    FROM direct AS d JOIN condition_link AS l USING (text_id)
    WHERE field_name = 'condition'
),
masks AS (
    SELECT bit_or((1::UINTEGER << (area_id - 1))::UINTEGER) AS field_mask,
           coalesce(bit_or((1::UINTEGER << (area_id - 1))::UINTEGER) FILTER (WHERE area = 'ConditionMeshTerm'),
                    0::UINTEGER) AS learned_mask
    FROM search_area WHERE field = field_name
)
SELECT k, text_id, (SELECT field_mask FROM masks) AS keep FROM direct
UNION ALL
SELECT k, text_id, (SELECT learned_mask FROM masks) FROM learned;

-- field_hit_rows_many(field, qs): per query, the index rows that count, one per study and matching text: the
-- study (study_no) and the areas of the field the text matched it in (area_mask).
CREATE OR REPLACE MACRO field_hit_rows_many(field_name, qs) AS TABLE
SELECT w.k, h.study_no, h.area_mask & w.keep AS area_mask
FROM search_hit AS h
JOIN field_texts_many(field_name, qs) AS w USING (text_id)
WHERE h.field = field_name AND h.area_mask & w.keep <> 0;

-- field_hits_many(field, qs): per query, the studies (study_no) matching it in a field ('condition',
-- 'intervention'), scored by the sum of the weights of the distinct areas matched. For conditions, MeSH terms
-- learned from matching condition texts (condition_link) also match, in the ConditionMeshTerm area. The
-- methods join on study_no; analysts get nct_id from field_matches.
CREATE OR REPLACE MACRO field_hits_many(field_name, qs) AS TABLE
WITH studies AS (
    SELECT k, study_no, bit_or(area_mask) AS area_mask
    FROM field_hit_rows_many(field_name, qs)
    GROUP BY k, study_no
)
SELECT s.k, s.study_no, m.score
FROM studies AS s
JOIN area_mask_score AS m ON m.field = field_name AND m.area_mask = s.area_mask;

-- field_studies_many(field, qs): the studies field_hits_many finds, without their scores, for the methods that
-- count and group matches rather than rank them.
CREATE OR REPLACE MACRO field_studies_many(field_name, qs) AS TABLE
SELECT DISTINCT k, study_no FROM field_hit_rows_many(field_name, qs);

CREATE OR REPLACE MACRO field_hits(field_name, q) AS TABLE
SELECT study_no, score FROM field_hits_many(field_name, [q]);

-- field_matches(field, q): field_hits by NCT ID.
CREATE OR REPLACE MACRO field_matches(field_name, q) AS TABLE
SELECT n.nct_id, h.score FROM field_hits(field_name, q) AS h JOIN study_number AS n USING (study_no);

-- term_hits(q): free text as query.term reads it: every word must appear in some BasicSearch area; studies by
-- study_no. term_matches(q): the same by NCT ID.
CREATE OR REPLACE MACRO term_hits(q) AS TABLE
WITH words AS (
    SELECT DISTINCT word FROM (SELECT unnest(string_split(trim(search_norm(q)), ' ')) AS word) WHERE word <> ''
),
per_word AS (
    SELECT w.word, h.study_no, bit_or(h.area_mask) AS area_mask
    FROM words AS w
    JOIN search_token AS k ON k.token = w.word
    JOIN search_hit AS h ON h.text_id = k.text_id
    WHERE h.field = 'term'
    GROUP BY w.word, h.study_no
),
studies AS (
    SELECT study_no, bit_or(area_mask) AS area_mask
    FROM per_word
    GROUP BY study_no
    HAVING count(*) = (SELECT count(*) FROM words)
)
SELECT s.study_no, m.score
FROM studies AS s
JOIN area_mask_score AS m ON m.field = 'term' AND m.area_mask = s.area_mask;

CREATE OR REPLACE MACRO term_matches(q) AS TABLE
SELECT n.nct_id, h.score FROM term_hits(q) AS h JOIN study_number AS n USING (study_no);

-- location_matches(location): 'Boston, MA' → studies with a site whose place holds every comma-separated
-- part (a US state's code or name either way). A part with no letter or digit ('%', '-') is no condition: it
-- normalises to nothing, and nothing would be contained in every place.
CREATE OR REPLACE MACRO location_matches(location_query) AS TABLE
WITH parts AS (
    SELECT i, part
    FROM (SELECT i, trim(search_norm(part)) AS part
          FROM (SELECT unnest(l) AS part, generate_subscripts(l, 1) AS i
                FROM (SELECT string_split(location_query, ',') AS l)))
    WHERE part <> ''
),
alternatives AS (
    SELECT i, part AS phrase FROM parts
    UNION
    SELECT p.i, s2.phrase
    FROM parts AS p
    JOIN synonym AS s1 ON s1.field = 'location' AND s1.phrase = p.part
    JOIN synonym AS s2 ON s2.field = 'location' AND s2.group_name = s1.group_name
),
places AS (
    SELECT pp.norm
    FROM place_norm AS pp
    JOIN alternatives AS a ON contains(pp.norm, a.phrase)
    GROUP BY pp.norm
    HAVING count(DISTINCT a.i) = (SELECT count(*) FROM parts)
)
SELECT DISTINCT nct_id FROM place_posting WHERE norm IN (SELECT norm FROM places);
