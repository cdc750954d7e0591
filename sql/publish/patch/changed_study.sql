-- patch.changed_study: the studies whose index rows a patch replaces ($nct_ids; ingest/catalog.py), with their
-- study_no. `patch` is the database the patch builds those studies' rows in; `catalog`, the catalog being built.
CREATE TABLE patch.changed_study AS
SELECT nct_id, study_number(nct_id) AS study_no
FROM (SELECT DISTINCT unnest($nct_ids::VARCHAR[]) AS nct_id)
ORDER BY nct_id;
