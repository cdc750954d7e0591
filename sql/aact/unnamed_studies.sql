-- Rows of studies.txt without an nct_id: nothing could load them, so the dump is refused.
SELECT count(*) FROM aact_studies WHERE nct_id IS NULL OR trim(nct_id) = '';
