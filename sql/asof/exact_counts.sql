-- How many studies a snapshot shows, and how many of them exactly as the registry had them (as_of_exact).
SELECT count(*) FILTER (WHERE as_of_exact) AS exact, count(*) AS studies FROM current_versions
