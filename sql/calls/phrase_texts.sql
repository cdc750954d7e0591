-- A reader's matcher of a query's phrases and concepts (ctmirror/read/phrase_texts.py): the rows it reads, kept for
-- the reader's later calls, and the macro that replaces the catalog's field_texts_many on its connection. Each query
-- begins with a line `-- name: <name>` and is read by read_sql("calls/phrase_texts.sql", "<name>").

-- name: use_catalog
-- The reader's cursor reads the state's catalog (attached as `catalog`, ctmirror/read/readonly.py), as the reader does.
USE catalog;

-- name: field_token_counts
-- field_token's distinct tokens in order, each with its count of rows: the reader's index of the words of the
-- condition's and intervention's areas (TokenIndex), read once.
SELECT token, count(*) AS n FROM field_token GROUP BY token ORDER BY token;

-- name: field_token_rows
-- field_token's texts and positions in the order of the index above.
SELECT text_id, position FROM field_token ORDER BY token, text_id, position;

-- name: search_token_positions
-- Every text holding $word (the free text's), with its positions in it.
SELECT text_id, position FROM search_token WHERE token = $word;

-- name: synonym_sets
-- The phrases of $field's synonym groups (search_phrases_many), each with its group's phrases, by phrase: read once.
SELECT phrase, phrases FROM synonym_set WHERE field = $field ORDER BY phrase;

-- name: other_names
-- Each text the records link other names to (field_texts_many's intervention_link), by its words, with the names,
-- when each was learned and whether the current state holds it: read once.
SELECT st.norm, list({'norm': lt.norm, 'learned_from': l.learned_from, 'is_current': l.is_current}) AS names
FROM intervention_link AS l
JOIN search_text AS st ON st.text_id = l.text_id
JOIN search_text AS lt ON lt.text_id = l.term_text_id
GROUP BY st.norm
ORDER BY st.norm;

-- name: condition_links
-- Every condition link (a text to the MeSH heading the registry filed it under), by text: read once.
SELECT text_id, term_text_id, (learned_from - DATE '1970-01-01')::BIGINT AS learned_days, is_current
FROM condition_link
ORDER BY text_id, term_text_id;

-- name: stop_words
SELECT stop_words();

-- name: field_texts_many
-- The catalog's field_texts_many (sql/methods/_matching.sql), the same rows, from field_phrase_texts: per query
-- (k), the texts whose hits count and whether a learned link found them (packed text_id << 1 | learned).
-- skip_scattered and relax are constants; the query's own phrase is left out where both hold and its words scatter.
-- A short answer comes as text from field_phrase_texts_listed, a long one through Arrow (list_answers.py).
CREATE OR REPLACE TEMP MACRO field_texts_many(field_name, qs, as_ofs, expand := true, skip_scattered := false,
                                              relax := true) AS TABLE
SELECT k, (v >> 1)::INTEGER AS text_id, (v & 1) = 1 AS learned
FROM (SELECT k, unnest(coalesce(
                    field_phrase_texts_listed(field_name, query, as_of, expand, skip_scattered AND relax)::BIGINT[],
                    field_phrase_texts(field_name, query, as_of, expand, skip_scattered AND relax))) AS v
      FROM (SELECT generate_subscripts(qs, 1) AS k, unnest(qs) AS query, unnest(as_ofs)::DATE AS as_of));
