-- What a query term expands to in a field ($field: condition, intervention or term; $term: query_norm of the
-- term) as of $as_of (NULL: the current state), one row per phrase it also finds: how (kind: 'synonym' of a group
-- in a synonym file of sql/data/ or an imported thesaurus, named by source: the group, 'mesh D…' for MeSH;
-- 'heading': a MeSH heading the registry filed a condition holding the term under; 'other name': a name the same
-- drug goes by in a record), the phrase (normalised), and the current studies (up to five, and how many) whose
-- records taught a link. sql/methods/_matching.sql is the matcher these rows describe.
WITH phrase AS (SELECT ltrim($term::VARCHAR, '"') AS norm),
synonyms AS (
    SELECT 'synonym' AS kind, s2.phrase, s1.group_name AS source
    FROM synonym AS s1
    JOIN synonym AS s2 ON s2.field = s1.field AND s2.group_name = s1.group_name
    WHERE s1.field = $field AND s1.phrase = (SELECT norm FROM phrase) AND s2.phrase <> s1.phrase
),
headings AS (
    SELECT 'heading' AS kind, ht.norm AS phrase, NULL AS source, l.term_text_id
    FROM matched_texts('condition', $term) AS m
    JOIN condition_link AS l USING (text_id)
    JOIN search_text AS ht ON ht.text_id = l.term_text_id
    WHERE $field IN ('condition', 'term')
      AND CASE WHEN $as_of::DATE IS NULL THEN l.is_current ELSE l.learned_from <= $as_of::DATE END
),
heading_teachers AS (
    SELECT h.phrase, list(DISTINCT c.nct_id ORDER BY c.nct_id) AS studies
    FROM (SELECT DISTINCT phrase FROM headings) AS h
    JOIN condition_links AS c ON c.term_norm = h.phrase
    JOIN matched_texts('condition', $term) AS m ON m.text_id = (SELECT text_id FROM search_text
                                                                WHERE norm = c.condition_norm)
    GROUP BY h.phrase
),
other_names AS (
    SELECT DISTINCT 'other name' AS kind, ot.norm AS phrase
    FROM search_text AS st
    JOIN intervention_link AS l ON l.text_id = st.text_id
    JOIN search_text AS ot ON ot.text_id = l.term_text_id
    WHERE $field IN ('intervention', 'term') AND st.norm = (SELECT norm FROM phrase)
      AND CASE WHEN $as_of::DATE IS NULL THEN l.is_current ELSE l.learned_from <= $as_of::DATE END
),
name_teachers AS (
    SELECT o.phrase, list(DISTINCT i.nct_id ORDER BY i.nct_id) AS studies
    FROM other_names AS o
    JOIN (SELECT nct_id, list_transform(list_prepend(name, other_names), n -> search_norm(n)) AS names
          FROM interventions WHERE len(other_names) > 0) AS i
      ON list_contains(i.names, o.phrase) AND list_contains(i.names, (SELECT norm FROM phrase))
    GROUP BY o.phrase
)
SELECT kind, trim(phrase) AS phrase, source, taught_by, teaching_studies
FROM (SELECT kind, phrase, source, NULL::VARCHAR[] AS taught_by, NULL::BIGINT AS teaching_studies FROM synonyms
      UNION ALL
      SELECT DISTINCT h.kind, h.phrase, h.source, t.studies[:5], len(t.studies)
      FROM headings AS h LEFT JOIN heading_teachers AS t USING (phrase)
      UNION ALL
      SELECT o.kind, o.phrase, NULL, t.studies[:5], len(t.studies)
      FROM other_names AS o LEFT JOIN name_teachers AS t USING (phrase))
ORDER BY kind DESC, teaching_studies DESC NULLS LAST, phrase
