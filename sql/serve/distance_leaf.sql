-- The versions with a site within $km km of ($lat, $lon): AREA[LocationGeoPoint]DISTANCE[lat, lon, 50mi], as
-- filter.geo finds them (versions_within).
SELECT version_no, 0.0 AS score FROM versions_within($lat::DOUBLE, $lon::DOUBLE, $km::DOUBLE)
