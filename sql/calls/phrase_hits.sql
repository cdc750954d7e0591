-- A reader's rows of a query's phrases and concepts (ctmirror/read/phrase_hits.py): the search_hit rows it reads,
-- and the macro that replaces the catalog's phrase_hit_rows_many on its connection. Each query begins with a line
-- `-- name: <name>` and is read by read_sql("calls/phrase_hits.sql", "<name>").

-- name: use_catalog
-- The reader's cursor reads the state's catalog (attached as `catalog`, ctmirror/read/readonly.py), as the reader does.
USE catalog;

-- name: text_hits
-- The rows of the texts $texts in $field's areas: the versions holding each, and in which areas.
SELECT text_id, version_no, area_mask
FROM search_hit
WHERE field = $field AND text_id IN (SELECT unnest($texts::INTEGER[]));

-- name: field_hits
-- $field's rows whole, by text and version: what a reader holds of them (FieldHits).
SELECT text_id, version_no, area_mask FROM search_hit WHERE field = $field ORDER BY text_id, version_no;

-- name: phrase_hit_rows_many
-- The catalog's phrase_hit_rows_many (sql/methods/_matching.sql), the same rows: a condition's and an
-- intervention's from field_phrase_hits, each version packed with whether a learned link found its text and its
-- areas (version_no << 17 | learned << 16 | area_mask); the free text's (term), whose search_hit rows are too many to
-- hold, and get_terminated's (stopped_only), whose stopped_hit rows are a few percent of search_hit's, in SQL
-- (phrase_hit_rows_in_sql_many), and every field's where the caller asks so (hits_in_plan). field_name,
-- stopped_only and hits_in_plan are constants: one branch is planned away. A short answer comes as text from
-- field_phrase_hits_listed, a long one through Arrow (list_answers.py).
CREATE OR REPLACE TEMP MACRO phrase_hit_rows_many(field_name, qs, as_ofs, expand := true, stopped_only := false,
                                                  skip_scattered := false, relax := true,
                                                  hits_in_plan := false) AS TABLE
SELECT k, (v >> 17)::BIGINT AS version_no,
       packed_areas((v & 65535)::UINTEGER, ((v >> 16) & 1)::INTEGER) AS area_mask
FROM (SELECT k, unnest(coalesce(
                    field_phrase_hits_listed(field_name, query, as_of, expand, skip_scattered AND relax)::UBIGINT[],
                    field_phrase_hits(field_name, query, as_of, expand, skip_scattered AND relax))) AS v
      FROM (SELECT generate_subscripts(qs, 1) AS k, unnest(qs) AS query, unnest(as_ofs)::DATE AS as_of)
      WHERE NOT stopped_only AND NOT hits_in_plan AND field_name IN ('condition', 'intervention'))
UNION ALL
SELECT *
FROM phrase_hit_rows_in_sql_many(field_name, qs, as_ofs, expand := expand, stopped_only := stopped_only,
                                 skip_scattered := skip_scattered, relax := relax)
WHERE stopped_only OR hits_in_plan OR field_name NOT IN ('condition', 'intervention');
