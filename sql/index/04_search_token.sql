-- search_token: word → the texts holding it and where (position: the word's place in the text, from 1).
-- A phrase matches a text where its words sit at consecutive positions, so matching reads this narrow table
-- only, never the texts themselves. Sorted by word so a lookup reads only the row groups of its words. A word is
-- also held in its other forms at the same position (word_variants: "therapie", as search_norm leaves
-- "therapies", is held as "therapy" too; "tumour" as "tumor", "ii" as "2", and back), so a query's word finds
-- each of them as it is.
CREATE TABLE search_token AS
SELECT token, text_id, position::INTEGER AS position
FROM (
    SELECT text_id, unnest(word_variants(word)) AS token, position
    FROM (SELECT text_id, unnest(words) AS word, generate_subscripts(words, 1) AS position
          FROM (SELECT text_id, string_split(trim(norm), ' ') AS words FROM search_text))
)
ORDER BY token, text_id, position;
