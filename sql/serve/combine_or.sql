-- Either term ({left}, {right}: subqueries of this request): the versions in any, their scores added.
SELECT version_no, sum(score) AS score FROM (SELECT * FROM {left} UNION ALL SELECT * FROM {right}) GROUP BY version_no
