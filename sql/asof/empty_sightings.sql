-- A snapshot's sightings: empty (when we saw what is our clock, not the registry's).
SELECT NULL::BIGINT AS receipt_id, NULL::VARCHAR AS nct_id, NULL::VARCHAR AS content_hash, NULL::VARCHAR AS locator,
       NULL::TIMESTAMP AS seen_at
WHERE false
