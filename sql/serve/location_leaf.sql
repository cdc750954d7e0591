-- The versions with a site at a place holding every comma-separated part of $phrase (as search's location filter).
SELECT version_no, 0.0 AS score FROM location_matches($phrase::VARCHAR)
