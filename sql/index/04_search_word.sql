-- search_word: word → the versions (version_no) holding it in some text of the condition's or the intervention's
-- areas, and in which (area_mask), stop words aside: what Essie's scattered words read (sql/methods/_matching.sql,
-- scattered_word_rows_many). Sorted by field and word, so a word's versions are one run of narrow rows, one row per
-- version, where search_token and search_hit would join every text holding the word to its versions over row groups
-- all across search_hit (text_id follows the texts' order, not the words'). Built a field at a time (field_words),
-- which bounds the grouping's memory.
CREATE OR REPLACE TEMP MACRO field_words(field_name) AS TABLE
SELECT h.field, t.token, h.version_no, bit_or(h.area_mask) AS area_mask
FROM search_hit AS h
JOIN search_token AS t USING (text_id)
WHERE h.field = field_name AND NOT list_contains(stop_words(), t.token)
GROUP BY h.field, t.token, h.version_no;
CREATE TABLE search_word AS FROM field_words('condition') ORDER BY field, token, version_no;
INSERT INTO search_word FROM field_words('intervention') ORDER BY field, token, version_no;
-- stopped_word: search_word's rows of the versions TERMINATED, WITHDRAWN or SUSPENDED in some span (those of
-- stopped_card, which is built beside this lane from the same version_epoch rows), in its order: get_terminated's
-- scattered words read these alone (scattered_word_rows_many, stopped_only), as every version it ranks is one of
-- them. A few percent of search_word, where grouping a broad word's versions of every status was most of a call.
-- A patch replaces a changed study's rows as search_word's; stopped_hit's (below) after the texts' patch
-- (publish/patch/texts.sql), as its text numbers are the catalog's.
CREATE TEMP TABLE stopped_version AS SELECT DISTINCT version_no FROM version_epoch WHERE is_stopped(overall_status);
CREATE TABLE stopped_word AS
SELECT * FROM search_word WHERE version_no IN (SELECT version_no FROM stopped_version)
ORDER BY field, token, version_no;
-- stopped_hit: search_hit's rows of the same versions, in its order (the condition's and intervention's fields):
-- get_terminated's phrases and concepts read these alone (phrase_hit_rows_many, stopped_only).
CREATE TABLE stopped_hit AS
SELECT * FROM search_hit
WHERE field IN ('condition', 'intervention') AND version_no IN (SELECT version_no FROM stopped_version)
ORDER BY field, text_id, version_no;
DROP TABLE stopped_version;
