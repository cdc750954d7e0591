-- synonym: the editable synonym file (sql/data/synonyms.csv, $synonyms): phrases of one group find each other.
CREATE TABLE synonym AS
SELECT DISTINCT field, group_name, search_norm(phrase) AS phrase
FROM read_csv($synonyms, header = true, columns = {field: 'VARCHAR', group_name: 'VARCHAR', phrase: 'VARCHAR'})
ORDER BY ALL;
