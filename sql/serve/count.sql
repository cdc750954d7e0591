-- How many studies a /api/v2/studies request finds (after matches.sql, spliced in on the next line).
{matches}
SELECT count(*) FROM matches
