-- study_identifier: the organisation's study ID and the secondary IDs of every version (area: OrgStudyId,
-- SecondaryId), normalised (norm), for the v2 API's IdSearch (query.id), AREA[OrgStudyId], AREA[SecondaryId] and
-- BasicSearch: looked up whole, by norm, apart from the search index's texts, which a unique ID a study would only
-- make longer for every other search.
CREATE TABLE study_identifier AS
SELECT DISTINCT s.norm, s.area, v.version_no
FROM all_search_terms AS s
JOIN study_version AS v USING (nct_id, content_hash)
WHERE s.area IN ('OrgStudyId', 'SecondaryId') AND length(trim(s.norm)) > 0
ORDER BY s.norm, v.version_no;
