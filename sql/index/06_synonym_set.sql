-- synonym_set: each phrase with every phrase of its groups (itself included), so a query's synonyms are one
-- lookup rather than two joins and a DISTINCT per call.
CREATE TABLE synonym_set AS
SELECT s1.field, s1.phrase, list(DISTINCT s2.phrase ORDER BY s2.phrase) AS phrases
FROM synonym AS s1
JOIN synonym AS s2 ON s2.field = s1.field AND s2.group_name = s1.group_name
GROUP BY s1.field, s1.phrase
ORDER BY ALL;
