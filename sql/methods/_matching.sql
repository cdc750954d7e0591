-- The matcher shared by every method: phrases and their synonyms → texts (token index) → studies, scored.

-- Every matcher takes a list of queries and answers for each by its position k (from 1), so a backtest's
-- thousands of calls match in one pass over the index; the one-query forms are the list of one. They answer with
-- versions of studies (version_no): which version a call shows is trial_card's (shown_at), so a method joins the
-- matched versions to the trial_card rows its call shows. as_ofs: each call's strict cutoff (NULL: current).

-- The query texts the matchers and the methods' *_many macros take (qs, and term_hits's q) are already normalised,
-- search_norm of what the user wrote: the Python API binds them so (ctmirror/core/words.py, the same function),
-- because the macro's Unicode tables cost a query about a millisecond to set up each time it runs. The forms for
-- SQL users (matched_texts, field_hits, field_matches, term_matches, and each method's one-call macro:
-- search_trials, detect_whitespace, ...) take the text as written and normalise it.

-- search_phrases_many(field, qs): per query, the query and the phrases of its synonym groups
-- (sql/data/synonyms.csv).
CREATE OR REPLACE MACRO search_phrases_many(field_name, qs) AS TABLE
WITH normed AS (SELECT generate_subscripts(qs, 1) AS k, unnest(qs) AS phrase)
SELECT n.k, unnest(coalesce(s.phrases, [n.phrase])) AS phrase
FROM normed AS n
LEFT JOIN synonym_set AS s ON s.field = field_name AND s.phrase = n.phrase
WHERE length(trim(n.phrase)) > 0;

CREATE OR REPLACE MACRO search_phrases(field_name, q) AS TABLE
SELECT phrase FROM search_phrases_many(field_name, [search_norm(q)]);

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
SELECT DISTINCT text_id FROM matched_texts_many(field_name, [search_norm(q)]);

-- field_texts_many(field, qs, as_ofs): per query, the texts whose hits count (text_id) and the areas they count
-- in (keep, a mask): every area of the field for the texts holding a phrase; for conditions, also the MeSH terms
-- learned from those texts (condition_link) by the call's cutoff, in the ConditionMeshTerm area only.
CREATE OR REPLACE MACRO field_texts_many(field_name, qs, as_ofs) AS TABLE
WITH direct AS (SELECT k, text_id FROM matched_texts_many(field_name, qs)),
learned AS (
    SELECT d.k, l.term_text_id AS text_id
    FROM direct AS d
    JOIN condition_link AS l USING (text_id)
    JOIN (SELECT generate_subscripts(as_ofs, 1) AS k, unnest(as_ofs)::DATE AS as_of) AS a USING (k)
    WHERE field_name = 'condition'
      AND CASE WHEN a.as_of IS NULL THEN l.is_current ELSE l.learned_from <= a.as_of END
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

-- field_hit_rows_many(field, qs, as_ofs): per query, the index rows that count, one per version and matching
-- text: the version (version_no) and the areas of the field the text matched it in (area_mask).
CREATE OR REPLACE MACRO field_hit_rows_many(field_name, qs, as_ofs) AS TABLE
SELECT w.k, h.version_no, h.area_mask & w.keep AS area_mask
FROM search_hit AS h
JOIN field_texts_many(field_name, qs, as_ofs) AS w USING (text_id)
WHERE h.field = field_name AND h.area_mask & w.keep <> 0;

-- field_hits_many(field, qs, as_ofs): per query, the versions (version_no) matching it in a field ('condition',
-- 'intervention'), scored by the sum of the weights of the distinct areas matched. For conditions, MeSH terms
-- learned from matching condition texts (condition_link) also match, in the ConditionMeshTerm area. The
-- methods join on version_no; analysts get the current studies' NCT IDs from field_matches.
CREATE OR REPLACE MACRO field_hits_many(field_name, qs, as_ofs) AS TABLE
WITH versions AS (
    SELECT k, version_no, bit_or(area_mask) AS area_mask
    FROM field_hit_rows_many(field_name, qs, as_ofs)
    GROUP BY k, version_no
)
SELECT s.k, s.version_no, m.score
FROM versions AS s
JOIN area_mask_score AS m ON m.field = field_name AND m.area_mask = s.area_mask;

-- field_studies_many(field, qs, as_ofs): the versions field_hits_many finds, without their scores, for the methods
-- that count and group matches rather than rank them.
CREATE OR REPLACE MACRO field_studies_many(field_name, qs, as_ofs) AS TABLE
SELECT DISTINCT k, version_no FROM field_hit_rows_many(field_name, qs, as_ofs);

-- field_hits(field, q): every version matching q (as the current state matches its MeSH terms).
CREATE OR REPLACE MACRO field_hits(field_name, q) AS TABLE
SELECT version_no, score FROM field_hits_many(field_name, [search_norm(q)], [NULL::DATE]);

-- field_matches(field, q): the current studies matching q, by NCT ID.
CREATE OR REPLACE MACRO field_matches(field_name, q) AS TABLE
SELECT v.nct_id, h.score FROM field_hits(field_name, q) AS h JOIN study_version AS v USING (version_no)
WHERE v.is_current;

-- term_hits(q): free text as query.term reads it: every word must appear in some BasicSearch area; versions by
-- version_no. term_matches(q): the current studies by NCT ID.
CREATE OR REPLACE MACRO term_hits(q) AS TABLE
WITH words AS (
    SELECT DISTINCT word FROM (SELECT unnest(string_split(trim(q), ' ')) AS word) WHERE word <> ''
),
per_word AS (
    SELECT w.word, h.version_no, bit_or(h.area_mask) AS area_mask
    FROM words AS w
    JOIN search_token AS k ON k.token = w.word
    JOIN search_hit AS h ON h.text_id = k.text_id
    WHERE h.field = 'term'
    GROUP BY w.word, h.version_no
),
versions AS (
    SELECT version_no, bit_or(area_mask) AS area_mask
    FROM per_word
    GROUP BY version_no
    HAVING count(*) = (SELECT count(*) FROM words)
)
SELECT s.version_no, m.score
FROM versions AS s
JOIN area_mask_score AS m ON m.field = 'term' AND m.area_mask = s.area_mask;

CREATE OR REPLACE MACRO term_matches(q) AS TABLE
SELECT v.nct_id, h.score FROM term_hits(search_norm(q)) AS h JOIN study_version AS v USING (version_no)
WHERE v.is_current;

-- location_matches(location): 'Boston, MA' → versions of studies (version_no) with a site whose place holds every comma-separated
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
SELECT DISTINCT version_no FROM place_posting WHERE norm IN (SELECT norm FROM places);
