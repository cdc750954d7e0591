-- study_number: a dense integer per current study (in nct_id order): the index tables and the methods key
-- studies by it, so their joins compare integers.
CREATE TABLE study_number AS
SELECT (row_number() OVER (ORDER BY nct_id))::INTEGER AS study_no, nct_id FROM studies ORDER BY nct_id;
