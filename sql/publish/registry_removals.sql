-- registry_removals: every time a sync found a study gone from the registry ($removals), oldest first.
CREATE OR REPLACE TABLE registry_removals AS
SELECT nct_id, removed_on::DATE AS removed_on, detected_at::TIMESTAMP AS detected_at, run_id, merged_into
FROM read_json($removals,
               columns = {nct_id: 'VARCHAR', removed_on: 'VARCHAR', detected_at: 'VARCHAR', run_id: 'VARCHAR',
                          merged_into: 'VARCHAR'},
               format = 'newline_delimited')
ORDER BY detected_at, nct_id;
