-- The matcher shared by every method: phrases and their synonyms → texts (token index) → studies, scored.

-- in_scope(first_posted, date_before): the one place date_before is applied to a trial.
CREATE OR REPLACE MACRO in_scope(first_posted, cutoff) AS
    (cutoff IS NULL OR first_posted <= cutoff::DATE);

-- search_phrases(field, q): the normalised query and the phrases of its synonym groups (sql/data/synonyms.csv).
CREATE OR REPLACE MACRO search_phrases(field_name, q) AS TABLE
SELECT DISTINCT phrase FROM (
    SELECT search_norm(q) AS phrase
    UNION ALL
    SELECT s2.phrase
    FROM synonym AS s1
    JOIN synonym AS s2 ON s2.field = s1.field AND s2.group_name = s1.group_name
    WHERE s1.field = field_name AND s1.phrase = search_norm(q)
)
WHERE length(trim(phrase)) > 0;

-- matched_texts(field, q): texts holding one of the phrases as whole words.
CREATE OR REPLACE MACRO matched_texts(field_name, q) AS TABLE
SELECT DISTINCT t.text_id
FROM search_phrases(field_name, q) AS p
JOIN search_token AS k ON k.token = longest_token(p.phrase)
JOIN search_text AS t ON t.text_id = k.text_id
WHERE contains(t.norm, p.phrase);

-- field_matches(field, q): studies matching q in a field ('condition', 'intervention'), scored by the sum of
-- the weights of the distinct areas matched. For conditions, MeSH terms learned from matching condition
-- texts (condition_link) also match, in the ConditionMeshTerm area.
CREATE OR REPLACE MACRO field_matches(field_name, q) AS TABLE
WITH direct AS (SELECT text_id FROM matched_texts(field_name, q)),
learned AS (
    SELECT term_text_id AS text_id FROM condition_link
    WHERE field_name = 'condition' AND text_id IN (SELECT text_id FROM direct)
),
areas AS (SELECT area_id, area, weight FROM search_area WHERE field = field_name),
hits AS (
    SELECT DISTINCT p.study_no, p.area_id
    FROM search_posting AS p
    WHERE p.area_id IN (SELECT area_id FROM areas) AND p.text_id IN (SELECT text_id FROM direct)
    UNION
    SELECT p.study_no, p.area_id
    FROM search_posting AS p
    WHERE p.area_id IN (SELECT area_id FROM areas WHERE area = 'ConditionMeshTerm')
      AND p.text_id IN (SELECT text_id FROM learned)
)
SELECT n.nct_id, s.score
FROM (SELECT h.study_no, sum(a.weight) AS score FROM hits AS h JOIN areas AS a USING (area_id) GROUP BY h.study_no) AS s
JOIN study_number AS n USING (study_no);

-- term_matches(q): free text as query.term reads it: every word must appear in some BasicSearch area.
CREATE OR REPLACE MACRO term_matches(q) AS TABLE
WITH words AS (
    SELECT DISTINCT word FROM (SELECT unnest(string_split(trim(search_norm(q)), ' ')) AS word) WHERE word <> ''
),
areas AS (SELECT area_id, weight FROM search_area WHERE field = 'term'),
hits AS (
    SELECT DISTINCT w.word, p.study_no, p.area_id
    FROM words AS w
    JOIN search_token AS k ON k.token = w.word
    JOIN search_posting AS p ON p.text_id = k.text_id
    WHERE p.area_id IN (SELECT area_id FROM areas)
)
SELECT n.nct_id, s.score
FROM (
    SELECT h.study_no, sum(a.weight) AS score
    FROM hits AS h JOIN areas AS a USING (area_id)
    GROUP BY h.study_no
    HAVING count(DISTINCT h.word) = (SELECT count(*) FROM words)
) AS s
JOIN study_number AS n USING (study_no);

-- location_matches(location): 'Boston, MA' → studies with a site whose place holds every comma-separated
-- part (a US state's code or name either way).
CREATE OR REPLACE MACRO location_matches(location_query) AS TABLE
WITH parts AS (
    SELECT i, search_norm(part) AS part
    FROM (SELECT unnest(l) AS part, generate_subscripts(l, 1) AS i FROM (SELECT string_split(location_query, ',') AS l))
    WHERE trim(part) <> ''
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
    FROM (SELECT DISTINCT norm FROM place_posting) AS pp
    JOIN alternatives AS a ON contains(pp.norm, a.phrase)
    GROUP BY pp.norm
    HAVING count(DISTINCT a.i) = (SELECT count(*) FROM parts)
)
SELECT DISTINCT nct_id FROM place_posting WHERE norm IN (SELECT norm FROM places);
