-- The stored records (the registry's JSON, as received) of the versions ($nct_ids, $hashes: pairs by position).
SELECT v.nct_id, v.content_hash, v.raw
FROM study_versions AS v
WHERE v.nct_id IN (SELECT unnest($nct_ids::VARCHAR[]))
  AND (v.nct_id, v.content_hash) IN (SELECT unnest($nct_ids::VARCHAR[]), unnest($hashes::VARCHAR[]))
