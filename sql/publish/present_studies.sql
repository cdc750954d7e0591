-- present_studies: current studies not already marked gone from the registry ($studies: a state's studies files).
SELECT nct_id FROM read_parquet($studies) WHERE removed_from_registry_on IS NULL
