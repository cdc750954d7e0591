-- The matcher's reading of a query (sql/methods/_matching.sql), after search_norm and its Unicode tables.

-- query_norm(q): a query as the matcher takes it: search_norm of its text; a query written in double quotes is
-- a phrase, marked by a leading '"' (ctmirror/core/words.py query_norm, the same rule).
CREATE OR REPLACE MACRO query_norm(q) AS
    CASE WHEN regexp_full_match(trim(q), '"[^"]*[^"\s][^"]*"') THEN '"' || search_norm(trim(q)[2:-2])
         ELSE search_norm(q) END;

-- stop_words(): words a query's scattered words may leave out (field_hit_rows_many): a phrase keeps them.
CREATE OR REPLACE MACRO stop_words() AS
    ['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'in', 'is', 'it', 'of', 'on', 'or', 'the',
     'to', 'with'];

-- word_variants(w): a normalised word and its other number where English spells it otherwise (search_norm drops a
-- plain plural 's' alone): "therapy" and "therapies" (stored as "therapie") find each other, as the registry's
-- lexical variants do: the index holds both (sql/index/04_search_token.sql). Only a 'y' after a consonant, in
-- words of four letters or more.
CREATE OR REPLACE MACRO word_variants(w) AS
    CASE WHEN length(w) >= 4 AND regexp_matches(w, '[^aeiouy]y$') THEN [w, w[:-2] || 'ie']
         WHEN length(w) >= 5 AND regexp_matches(w, '[^aeiouy]ie$') THEN [w, w[:-3] || 'y']
         ELSE [w] END;
