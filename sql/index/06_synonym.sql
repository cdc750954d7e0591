-- synonym: the built-in synonym files (sql/data/: ingest/catalog.py's BUILT_IN_SYNONYMS) and the
-- warehouse's imported thesaurus (a MeSH descriptor file: ingest/thesaurus.py), $synonyms, the files' list:
-- phrases of one group find each other. Each file is read in its own dialect (union_by_name), so one saved with
-- Windows line ends is not read as empty. A phrase is also held spelled otherwise (spelled_otherwise: "type ii
-- diabetes" beside "type 2 diabetes"). The free text (term: query.term, BasicSearch) expands a condition's and a
-- drug's names as the condition and intervention fields do: their groups again, under field 'term'.
CREATE TABLE synonym AS
WITH listed AS (
    SELECT field, group_name, search_norm(phrase) AS phrase
    FROM read_csv($synonyms, header = true, union_by_name = true,
                  columns = {field: 'VARCHAR', group_name: 'VARCHAR', phrase: 'VARCHAR'})
),
spelled AS (
    SELECT * FROM listed UNION ALL SELECT field, group_name, spelled_otherwise(phrase) FROM listed
)
SELECT DISTINCT field, group_name, phrase
FROM (SELECT * FROM spelled
      UNION ALL
      SELECT 'term', field || ': ' || group_name, phrase FROM spelled WHERE field IN ('condition', 'intervention'))
ORDER BY ALL;
