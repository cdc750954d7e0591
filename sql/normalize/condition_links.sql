-- condition_links: synonyms a study version teaches: its condition text (normalised) contains the text from which
-- the registry derived one of its condition MeSH terms (a HIGH browse leaf's asFound), so a query matching the
-- condition also finds studies indexed under the term: "NASH - Nonalcoholic Steatohepatitis" teaches that NASH
-- maps to "Non-alcoholic Fatty Liver Disease". Only a condition that is the found text, or the found text (of two
-- words or more) plus one more word (an abbreviation or alias, like NASH), teaches: "Erectile Dysfunction With
-- Type 1 Diabetes Mellitus" names two things, and linking it to "Erectile Dysfunction" would send every diabetes
-- query there; "Premature Ejaculation", found as "Premature", is not "Premature Birth".
-- key: nct_id, content_hash, condition_norm, term_norm
-- v is named three times, so DuckDB would materialise it, copying every record's two sections whole. Not
-- materialised, each use reads only the fields it names.
WITH v AS NOT MATERIALIZED (
    SELECT nct_id, content_hash, d.protocolSection AS ps, d.derivedSection AS ds FROM new_versions
),
leaves AS (
    SELECT nct_id, content_hash, b.name AS term, b.asFound AS found
    FROM (SELECT nct_id, content_hash, unnest(ds.conditionBrowseModule.browseLeaves) AS b FROM v)
    WHERE b.relevance = 'HIGH' AND b.asFound IS NOT NULL
),
meshes AS (
    SELECT nct_id, content_hash, unnest(list_transform(ds.conditionBrowseModule.meshes, m -> m.term)) AS term FROM v
),
conds AS (
    SELECT nct_id, content_hash, unnest(ps.conditionsModule.conditions) AS condition FROM v
    WHERE (nct_id, content_hash) IN (SELECT (nct_id, content_hash) FROM leaves)
),
linked AS (  -- leaves that are MeSH terms of the same version, before any text is normalised
    SELECT l.nct_id, l.content_hash, l.term, l.found FROM leaves AS l
    JOIN meshes AS m ON m.nct_id = l.nct_id AND m.content_hash = l.content_hash AND m.term = l.term
),
texts AS (
    SELECT text, search_norm(text) AS norm
    FROM (SELECT condition AS text FROM conds UNION SELECT term FROM linked UNION SELECT found FROM linked)
)
SELECT DISTINCT c.nct_id, c.content_hash, cn.norm AS condition_norm, tn.norm AS term_norm
FROM conds AS c
JOIN linked AS l ON l.nct_id = c.nct_id AND l.content_hash = c.content_hash
JOIN texts AS cn ON cn.text = c.condition
JOIN texts AS fn ON fn.text = l.found
JOIN texts AS tn ON tn.text = l.term
WHERE contains(cn.norm, fn.norm)
  AND (cn.norm = fn.norm
       OR (len(list_filter(string_split(replace(cn.norm, fn.norm, ' '), ' '), w -> w <> '')) = 1
           AND len(list_filter(string_split(fn.norm, ' '), w -> w <> '')) >= 2))
