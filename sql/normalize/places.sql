-- places: each distinct site of a study version (facility, city, state, ZIP code, country: the LocationSearch
-- area's fields), normalised for query.locn and search's `location` filter, which look for every comma-separated
-- part of the query in one site ("Mayo Clinic, Rochester", "Boston, MA", "55905"). Each distinct site is
-- normalised once: sites repeat across studies.
-- key: nct_id, content_hash, norm
WITH sites AS (
    SELECT DISTINCT nct_id, content_hash, concat_ws(' , ', x.facility, x.city, x.state, x.zip, x.country) AS place
    FROM (SELECT nct_id, content_hash, unnest(d.protocolSection.contactsLocationsModule.locations) AS x
          FROM new_versions)
),
normalised AS (SELECT place, search_norm(place) AS norm FROM (SELECT DISTINCT place FROM sites))
SELECT DISTINCT s.nct_id, s.content_hash, n.norm
FROM sites AS s
JOIN normalised AS n USING (place)
