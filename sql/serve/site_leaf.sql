-- The versions with one site whose recruitment status is $status (as the API's enumeration writes it:
-- records.enum_value) at a place holding every comma-separated part of $phrase, as query.locn finds places
-- (location_places_many): SEARCH[Location](AREA[LocationCountry]France AND
-- AREA[LocationStatus]RECRUITING), a French site that recruits, not a French site and a site recruiting elsewhere.
-- The sites are read from trial_detail, of the versions with such a place alone; each distinct place among them is
-- normalised once (sites repeat from version to version).
WITH places AS (SELECT norm FROM location_places_many([$phrase::VARCHAR])),
sites AS (
    SELECT version_no, concat_ws(' , ', site.facility, site.city, site.state, site.zip, site.country) AS place
    FROM (SELECT version_no, unnest(locations) AS site
          FROM trial_detail
          WHERE version_no IN (SELECT version_no FROM place_posting WHERE norm IN (SELECT norm FROM places)))
    WHERE upper(replace(site.status, ' ', '_')) = $status::VARCHAR
),
placed AS (
    SELECT place FROM (SELECT DISTINCT place FROM sites) WHERE search_norm(place) IN (SELECT norm FROM places)
)
SELECT DISTINCT version_no, 0.0 AS score
FROM sites
WHERE place IN (SELECT place FROM placed)
