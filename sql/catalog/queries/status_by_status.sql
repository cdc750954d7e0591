-- status_by_status: current studies per overall status, most first.
SELECT coalesce(overall_status, '(none)') AS overall_status, count(*) AS studies
FROM studies GROUP BY ALL ORDER BY studies DESC, overall_status
