-- A reader's matcher of Essie's scattered words (ctmirror/read/word_postings.py): the versions of the words it reads,
-- and the macro that replaces the catalog's scattered_word_versions_many on its connection. Each query begins with a
-- line `-- name: <name>` and is read by read_sql("calls/word_postings.sql", "<name>").

-- name: use_catalog
-- The reader's cursor reads the state's catalog (attached as `catalog`, ctmirror/read/readonly.py), as the reader does.
USE catalog;

-- name: search_word_versions
-- The versions holding $word in some text of $field's areas (search_word's rows), as stored.
SELECT version_no, area_mask FROM search_word WHERE field = $field AND token = $word;

-- name: field_words
-- $field's words in order, each with its count of rows: the index of the field's whole rows (FieldPostings).
SELECT token, count(*) AS n FROM search_word WHERE field = $field GROUP BY token ORDER BY token;

-- name: field_word_versions
-- $field's rows in the order of its words above, each word's by version (sorted on the word's number, not its text).
WITH words AS (
    SELECT token, (row_number() OVER (ORDER BY token) - 1)::UINTEGER AS word
    FROM (SELECT DISTINCT token FROM search_word WHERE field = $field)
)
SELECT w.version_no, w.area_mask
FROM search_word AS w
JOIN words USING (token)
WHERE w.field = $field
ORDER BY words.word, w.version_no;

-- name: scattered_word_versions_many
-- The catalog's scattered_word_versions_many (sql/methods/_matching.sql), the same rows: a condition's or an
-- intervention's words intersected by intersect_word_versions; grouped in SQL (grouped_word_versions_many), the free
-- text's (term), whose words search_word does not hold, and get_terminated's (stopped_only), whose stopped_word holds a
-- few percent of search_word's rows (grouped in less time than a call of the function takes). field_name and
-- stopped_only are constants: one branch is planned away. The function packs each version with its areas
-- (version_no << 16 | area_mask; word_postings.py).
CREATE OR REPLACE TEMP MACRO scattered_word_versions_many(field_name, qs, relax := true, within := NULL,
                                                          stopped_only := false) AS TABLE
SELECT k, (v >> 16)::BIGINT AS version_no, (v & 65535)::UINTEGER AS area_mask
FROM (SELECT k, unnest(intersect_word_versions(field_name, words, within::UINTEGER)) AS v
      FROM scattered_words(qs, relax := relax)
      WHERE field_name <> 'term' AND NOT stopped_only)
UNION ALL
SELECT k, version_no, area_mask
FROM grouped_word_versions_many(field_name, qs, relax := relax, within := within, stopped_only := stopped_only)
WHERE field_name = 'term' OR stopped_only;

-- name: words_intersected_outside_plan
-- The catalog's words_intersected_outside_plan (sql/methods/_matching.sql), true here: a reader's callers take the
-- intersection above.
CREATE OR REPLACE TEMP MACRO words_intersected_outside_plan() AS true;
