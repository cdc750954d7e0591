-- stats_completion(condition, intervention, sponsor, date_before, as_of): one row: trials (in scope), closed (completed,
-- terminated or withdrawn), completed, terminated, withdrawn, suspended, completion_rate and termination_rate
-- (of the closed trials).
s AS (SELECT * FROM scope),
c AS (
    SELECT count(*) AS trials,
           count(*) FILTER (WHERE overall_status IN ('COMPLETED', 'TERMINATED', 'WITHDRAWN')) AS closed,
           count(*) FILTER (WHERE overall_status = 'COMPLETED') AS completed,
           count(*) FILTER (WHERE overall_status = 'TERMINATED') AS terminated,
           count(*) FILTER (WHERE overall_status = 'WITHDRAWN') AS withdrawn,
           count(*) FILTER (WHERE overall_status = 'SUSPENDED') AS suspended
    FROM s
)
SELECT *, share_of(completed, closed) AS completion_rate, share_of(terminated, closed) AS termination_rate FROM c;
