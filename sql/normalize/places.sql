-- places: each distinct site place (city, state, country) of a study version, normalised for the `location`
-- filter of search. Each distinct place is normalised once: cities repeat across studies.
-- key: nct_id, content_hash, norm
WITH sites AS (
    SELECT DISTINCT nct_id, content_hash, concat_ws(' , ', x.city, x.state, x.country) AS place
    FROM (SELECT nct_id, content_hash, unnest(d.protocolSection.contactsLocationsModule.locations) AS x
          FROM new_versions)
),
normalised AS (SELECT place, search_norm(place) AS norm FROM (SELECT DISTINCT place FROM sites))
SELECT DISTINCT s.nct_id, s.content_hash, n.norm
FROM sites AS s
JOIN normalised AS n USING (place)
