-- Every old NCT ID and the study it became (nct_alias), for looking one up without a query.
SELECT alias_nct_id, nct_id FROM nct_alias
