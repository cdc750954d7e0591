-- A request's matches as a temporary table ({table}: ours), from matches.sql spliced in on the next line, so its
-- page and its count read them once.
CREATE OR REPLACE TEMP TABLE {table} AS
{matches}
SELECT version_no, card_no, study_no, key1, key2 FROM matches  -- numbers only: the page reads its rows' texts
