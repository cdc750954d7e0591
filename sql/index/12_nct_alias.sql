-- nct_alias: an old NCT ID → the study it became (the lowest, should two claim it), native so that a lookup
-- reads no Parquet.
CREATE TABLE nct_alias AS
SELECT alias_nct_id, min(nct_id) AS nct_id FROM nct_aliases GROUP BY alias_nct_id ORDER BY alias_nct_id;
