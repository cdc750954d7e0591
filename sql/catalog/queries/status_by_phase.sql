-- status_by_phase: current studies per display phase, most first.
SELECT CASE WHEN phase = '' THEN '(none)' ELSE phase END AS phase, count(*) AS studies
FROM studies GROUP BY ALL ORDER BY studies DESC, phase
