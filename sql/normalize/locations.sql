-- locations: one row per site of a study version.
-- key: nct_id, content_hash, ordinal
SELECT
    nct_id, content_hash, ordinal,
    x.facility AS facility, x.status AS status, x.city AS city, x.state AS state, x.zip AS zip,
    x.country AS country, x.geoPoint.lat AS lat, x.geoPoint.lon AS lon
FROM (
    SELECT nct_id, content_hash, generate_subscripts(l, 1) AS ordinal, unnest(l) AS x
    FROM (SELECT nct_id, content_hash, d.protocolSection.contactsLocationsModule.locations AS l FROM new_versions)
)
