-- study_number: each current study's number (study_no): the 8 digits of its NCT ID, so a study keeps its number
-- from state to state and numbers order as NCT IDs do. The index tables and the methods key studies by it (and
-- break ties by it), so their joins compare integers.
CREATE TABLE study_number AS
SELECT study_number(nct_id) AS study_no, nct_id FROM studies ORDER BY nct_id;
