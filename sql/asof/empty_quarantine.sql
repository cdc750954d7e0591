-- A snapshot's quarantine: empty (what we failed to load is our clock, not the registry's).
SELECT NULL::BIGINT AS receipt_id, NULL::VARCHAR AS origin, NULL::VARCHAR AS locator, NULL::VARCHAR AS nct_id,
       NULL::VARCHAR AS reason, NULL::VARCHAR AS record_text, NULL::TIMESTAMP AS quarantined_at
WHERE false
