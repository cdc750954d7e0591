-- A patch's current_version (publish/queries.sql (current_version_table)): the previous catalog's, the changed studies'
-- rows ($nct_ids) replaced by their current versions', those the registry still has (this state's studies).
DELETE FROM current_version WHERE nct_id IN (SELECT unnest($nct_ids::VARCHAR[]));
INSERT INTO current_version
SELECT nct_id, content_hash FROM studies WHERE nct_id IN (SELECT unnest($nct_ids::VARCHAR[])) ORDER BY nct_id;
