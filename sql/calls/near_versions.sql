-- The versions with a site within $geo_km km of ($geo_lat, $geo_lon) (versions_near): the v2 API's filter.geo
-- (serve/matches.sql's $near) and search's `near`, read before the search, so a search without one never opens
-- the locations (a filter of the search that read them would read them at every call: a NULL point does not fold).
SELECT coalesce(list(version_no), []) FROM versions_near($geo_lat::DOUBLE, $geo_lon::DOUBLE, $geo_km::DOUBLE)
