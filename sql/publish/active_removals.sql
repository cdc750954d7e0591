-- active_removals: studies found gone from the registry and not seen since ($removals: warehouse/sync/removals.ndjson;
-- $sightings: every segment's sightings). A study that comes back is no longer marked.
CREATE OR REPLACE TABLE active_removals AS
SELECT r.nct_id, max(r.removed_on) AS removed_on, arg_max(r.merged_into, r.detected_at) AS merged_into
FROM registry_removals AS r
GROUP BY r.nct_id
HAVING max(r.detected_at) > coalesce(
    (SELECT max(s.seen_at) FROM read_parquet($sightings) AS s WHERE s.nct_id = r.nct_id), TIMESTAMP '1900-01-01');
