-- Words as the matcher reads them: every text's (search_norm, after its Unicode tables) and a query's.

-- possessive_s(possessed): an apostrophe (' ’ ʼ ‘ `) between a word's last letter and a final s deleted, so the
-- possessive is the word's plural, which search_norm drops: "Alzheimer's Disease", "Alzheimers Disease" and
-- "Alzheimer Disease" (the MeSH heading) are one text, as the registry finds them. Other apostrophes separate
-- words. Applied to lower-case, space-padded text, after compatibility forms are folded. The s must end the word
-- at an ASCII separator (any other character is taken for a letter, as on its left): the classes of RE2's Unicode
-- letters took milliseconds to compile, and every query planned over search_norm compiles them.
CREATE OR REPLACE MACRO possessive_s(possessed) AS
    regexp_replace(possessed,
                   '([^\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F])[''’ʼ‘`]s([\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F])',
                   '\1s\2', 'g');

-- search_norm(s): text as the matcher compares it: compatibility forms folded (NFKC, one character at a time:
-- 'Ｘ' -> 'X', 'ﬁ' -> 'fi'), lower case, accents stripped, a possessive's apostrophe deleted (possessive_s), every
-- run of punctuation, separators and separating symbols of any script turned to one space ('X，Y' and 'X–Y' are
-- two words), a plain plural 's' dropped, one space padding each side. A phrase matches a text when
-- search_norm(text) contains search_norm(phrase): whole words only, so 'ASA' never matches 'Glasgow', and
-- 'Non-Alcoholic' matches 'non alcoholic'. Letters of every script are kept. ASCII text (strlen counting bytes
-- equals length counting characters) takes the short class of everything ASCII but letters and digits; other text
-- the Unicode macros of unicode_text.sql. Each macro here reads its argument once where it passes it on: a macro's
-- argument is copied wherever the macro reads it, and compatibility_fold reads its own nine times.
CREATE OR REPLACE MACRO search_norm(s) AS
    regexp_replace(
        CASE WHEN strlen(s) = length(s)
             THEN regexp_replace(possessive_s(' ' || lower(s) || ' '), '[\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F]+', ' ',
                                 'g')
             ELSE word_separators_to_space(possessive_s(' ' || lower(strip_accents(compatibility_fold(s))) || ' '))
        END,
        '(\S{3})s ', '\1 ', 'g');

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
