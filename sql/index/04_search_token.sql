-- search_token: word → texts holding it; sorted by word so a lookup reads only the row groups of that word.
CREATE TABLE search_token AS
SELECT DISTINCT unnest(string_split(trim(norm), ' ')) AS token, text_id
FROM search_text
ORDER BY token, text_id;
