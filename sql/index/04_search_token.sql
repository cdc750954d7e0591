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
-- field_token: search_token's rows of the texts in a condition's or intervention's area (search_hit), which their
-- phrases read (sql/methods/_matching.sql, field_tokens): a word's texts there, without the free text's long
-- summaries, outcomes and sponsors, which only BasicSearch (term) reads. A text once there stays (versions are
-- never dropped).
CREATE TABLE field_token AS
SELECT * FROM search_token
WHERE text_id IN (SELECT text_id FROM search_hit WHERE field IN ('condition', 'intervention'))
ORDER BY token, text_id, position;
