-- intervention_link: the names of one drug the registry's records teach, as text ids of the search index: an
-- intervention's name and its other names ("Pembrolizumab", "Keytruda", "MK-3475") link each to each, both ways,
-- so a brand name finds the studies that list only the generic name. learned_from and is_current as in
-- condition_link: a link counts from the first cutoff at which a version teaching it is shown.
-- Guards against over-reach: a name of fewer than three characters teaches nothing, nor does a generic one
-- (placebo, saline, standard of care: generic_intervention_name), nor a name linked to more than 60 others (a
-- catch-all such as "chemotherapy" lists the names of every drug given as one).
CREATE TABLE intervention_link AS
WITH names AS (
    SELECT nct_id, content_hash, ordinal, norm
    FROM (SELECT nct_id, content_hash, ordinal, search_norm(unnest(list_prepend(name, other_names))) AS norm
          FROM all_interventions
          WHERE len(other_names) > 0)
    WHERE length(trim(norm)) >= 3 AND NOT generic_intervention_name(norm)
),
pairs AS (
    SELECT a.nct_id, a.content_hash, a.norm AS name_norm, b.norm AS other_norm
    FROM names AS a
    JOIN names AS b USING (nct_id, content_hash, ordinal)
    WHERE a.norm <> b.norm
),
linked AS (
    SELECT nt.text_id, ot.text_id AS term_text_id, min(t.shown_from) AS learned_from, bool_or(t.is_current) AS is_current
    FROM pairs AS p
    JOIN study_version AS v USING (nct_id, content_hash)
    JOIN taught_from() AS t USING (version_no)
    JOIN search_text AS nt ON nt.norm = p.name_norm
    JOIN search_text AS ot ON ot.norm = p.other_norm
    GROUP BY nt.text_id, ot.text_id
),
spread AS (SELECT text_id FROM linked GROUP BY text_id HAVING count(*) > 60)
SELECT * FROM linked
WHERE text_id NOT IN (SELECT text_id FROM spread) AND term_text_id NOT IN (SELECT text_id FROM spread)
ORDER BY ALL;
