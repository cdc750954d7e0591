-- The matcher's reading of a query (sql/methods/_matching.sql), after search_norm and its Unicode tables.

-- query_norm(q): a query as the matcher takes it: search_norm of its text; a query written in double quotes is
-- a phrase, marked by a leading '"' (ctmirror/core/words.py query_norm, the same rule).
CREATE OR REPLACE MACRO query_norm(q) AS
    CASE WHEN regexp_full_match(trim(q), '"[^"]*[^"\s][^"]*"') THEN '"' || search_norm(trim(q)[2:-2])
         ELSE search_norm(q) END;

-- stop_words(): words a query's scattered words may leave out (field_word_rows_many): a phrase keeps them.
CREATE OR REPLACE MACRO stop_words() AS
    ['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'in', 'is', 'it', 'of', 'on', 'or', 'the',
     'to', 'with'];
