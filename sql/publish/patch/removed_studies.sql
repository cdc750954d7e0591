-- The studies the registry removed that the previous state knew of ($before: its registry_removals file) or this
-- publish does (registry_removals): a removal marks a study's rows, and a sighting after one unmarks them.
SELECT nct_id FROM read_parquet($before)
UNION
SELECT nct_id FROM registry_removals
