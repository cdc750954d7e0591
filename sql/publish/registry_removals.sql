-- registry_removals: every time a sync found a study gone from the registry ($removals), oldest first. A torn last
-- line (a sync killed while appending) is skipped: that sync records its removals again when it resumes, and a
-- study a run recorded twice so counts once.
CREATE OR REPLACE TABLE registry_removals AS
SELECT nct_id, removed_on::DATE AS removed_on, detected_at::TIMESTAMP AS detected_at, run_id, merged_into
FROM read_json($removals,
               columns = {nct_id: 'VARCHAR', removed_on: 'VARCHAR', detected_at: 'VARCHAR', run_id: 'VARCHAR',
                          merged_into: 'VARCHAR'},
               format = 'newline_delimited', ignore_errors = true)
WHERE nct_id IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY nct_id, run_id ORDER BY detected_at) = 1
ORDER BY detected_at, nct_id;
