-- A snapshot's registry_removals: empty (removals are found by our syncs, after the fact).
SELECT NULL::VARCHAR AS nct_id, NULL::DATE AS removed_on, NULL::TIMESTAMP AS detected_at, NULL::VARCHAR AS run_id,
       NULL::VARCHAR AS merged_into
WHERE false
