-- The current studies ($files: the segments' studies files), marked when the registry no longer has them, in
-- the files' order (as publish/current_rows.sql: ordering 600,000 studies by NCT ID took three times as long as
-- writing them).
SELECT t.*, r.removed_on AS removed_from_registry_on, r.merged_into AS merged_into_nct_id, true AS as_of_exact,
       NULL::DATE AS reconstructed_from, []::VARCHAR[] AS withheld
FROM read_parquet($files, union_by_name = true) AS t
JOIN current_versions AS c ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
LEFT JOIN active_removals AS r ON r.nct_id = t.nct_id
