-- A patch of the search index's texts. Every version's texts stay in search_text (versions are never dropped), so
-- the patch's texts are the catalog's, found by their words, or new: numbered after the last, their words added
-- to search_token. The changed versions' hits are then written with the catalog's numbers.
CREATE TABLE patch.text_number AS
WITH known AS (
    SELECT p.text_id AS patch_id, s.text_id, false AS is_new
    FROM patch.search_text AS p
    JOIN search_text AS s USING (norm)
),
added AS (
    SELECT p.text_id AS patch_id,
           ((SELECT coalesce(max(text_id), 0) FROM search_text) + row_number() OVER (ORDER BY p.norm))::INTEGER
               AS text_id,
           true AS is_new
    FROM patch.search_text AS p
    WHERE p.text_id NOT IN (SELECT patch_id FROM known)
)
SELECT * FROM known UNION ALL SELECT * FROM added;
INSERT INTO search_text
SELECT n.text_id, p.norm
FROM patch.search_text AS p JOIN patch.text_number AS n ON n.patch_id = p.text_id
WHERE n.is_new
ORDER BY n.text_id;
INSERT INTO search_token
SELECT t.token, n.text_id, t.position
FROM patch.search_token AS t JOIN patch.text_number AS n ON n.patch_id = t.text_id
WHERE n.is_new
ORDER BY t.token, n.text_id, t.position;
-- field_token: the words of the patch's texts in a condition's or intervention's area that were not yet there
-- (new texts, or known ones only the free text held).
INSERT INTO field_token
SELECT t.token, n.text_id, t.position
FROM patch.field_token AS t JOIN patch.text_number AS n ON n.patch_id = t.text_id
WHERE n.is_new OR n.text_id NOT IN (SELECT text_id FROM field_token)
ORDER BY t.token, n.text_id, t.position;
DELETE FROM search_hit WHERE version_study(version_no) IN (SELECT study_no FROM patch.changed_study);
INSERT INTO search_hit
SELECT h.field, n.text_id, h.version_no, h.area_mask
FROM patch.search_hit AS h JOIN patch.text_number AS n ON n.patch_id = h.text_id
ORDER BY h.field, n.text_id, h.version_no;
-- stopped_hit: the changed studies' rows again, from search_hit as now patched, for the versions of stopped_card
-- (patched by version before the texts).
DELETE FROM stopped_hit WHERE version_study(version_no) IN (SELECT study_no FROM patch.changed_study);
INSERT INTO stopped_hit
SELECT * FROM search_hit
WHERE field IN ('condition', 'intervention')
  AND version_study(version_no) IN (SELECT study_no FROM patch.changed_study)
  AND version_no IN (SELECT version_no FROM stopped_card)
ORDER BY field, text_id, version_no;
-- place_norm: every place of every version's sites once; likewise only ever added to.
INSERT INTO place_norm
SELECT DISTINCT norm FROM patch.place_norm WHERE norm NOT IN (SELECT norm FROM place_norm) ORDER BY norm;
