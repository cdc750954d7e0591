-- filter.ids' NCT IDs ($ids) and the studies those that are aliases now name, for matches.sql's $ids.
SELECT list(DISTINCT id ORDER BY id) FROM (
    SELECT unnest($ids::VARCHAR[]) AS id
    UNION ALL
    SELECT nct_id FROM nct_alias WHERE alias_nct_id IN (SELECT unnest($ids::VARCHAR[]))
)
