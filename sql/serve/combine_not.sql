-- The first term without the second ({left}, {right}: subqueries of this request).
SELECT a.version_no, a.score FROM {left} AS a ANTI JOIN {right} AS b USING (version_no)
