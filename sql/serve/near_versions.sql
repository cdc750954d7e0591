-- filter.geo: the versions with a site within $geo_km km of ($geo_lat, $geo_lon) (versions_near), for matches.sql's
-- $near; read before the search, so a search without it never opens the locations.
SELECT coalesce(list(version_no), []) FROM versions_near($geo_lat::DOUBLE, $geo_lon::DOUBLE, $geo_km::DOUBLE)
