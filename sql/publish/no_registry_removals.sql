-- registry_removals when no sync has found any study gone (and in snapshots, which hold the registry's clock only).
CREATE OR REPLACE TABLE registry_removals (
    nct_id VARCHAR, removed_on DATE, detected_at TIMESTAMP, run_id VARCHAR, merged_into VARCHAR);
