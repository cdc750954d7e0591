-- synonym: the editable synonym file (sql/data/synonyms.csv) and the warehouse's imported thesaurus (a MeSH
-- descriptor file: ingest/thesaurus.py), $synonyms, the files' list: phrases of one group find each other. Each
-- file is read in its own dialect (union_by_name), so one saved with Windows line ends is not read as empty.
CREATE TABLE synonym AS
SELECT DISTINCT field, group_name, search_norm(phrase) AS phrase
FROM read_csv($synonyms, header = true, union_by_name = true,
              columns = {field: 'VARCHAR', group_name: 'VARCHAR', phrase: 'VARCHAR'})
ORDER BY ALL;
