-- Both terms ({left}, {right}: subqueries of this request): the versions in both, their scores added.
SELECT a.version_no, a.score + b.score AS score FROM {left} AS a JOIN {right} AS b USING (version_no)
