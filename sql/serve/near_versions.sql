-- filter.geo: the versions with a site within $geo_km km of ($geo_lat, $geo_lon) (haversine on the mean Earth
-- radius), for matches.sql's $near; read before the search, so a search without it never opens the locations.
SELECT coalesce(list(DISTINCT v.version_no), [])
FROM all_locations AS l
JOIN study_version AS v USING (nct_id, content_hash)
WHERE l.lat IS NOT NULL AND l.lon IS NOT NULL
  AND 6371.0088 * 2 * asin(sqrt(
          pow(sin(radians(l.lat - $geo_lat::DOUBLE) / 2), 2)
          + cos(radians($geo_lat::DOUBLE)) * cos(radians(l.lat)) * pow(sin(radians(l.lon - $geo_lon::DOUBLE) / 2), 2)))
      <= $geo_km::DOUBLE
