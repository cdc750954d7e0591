-- batch_counts: what one batch did: records parsed, versions added, of which studies never seen before.
SELECT
    (SELECT count(*) FROM parsed) AS records,
    (SELECT count(*) FROM new_versions) AS versions_added,
    (SELECT count(DISTINCT nct_id) FROM new_versions
      WHERE nct_id NOT IN (SELECT nct_id FROM known_versions)) AS studies_added,
    (SELECT count(DISTINCT nct_id) FROM new_versions
      WHERE nct_id IN (SELECT nct_id FROM known_versions)) AS studies_changed
