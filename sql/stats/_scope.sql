-- analytics_scope(condition, intervention, sponsor, date_before, as_of): the trial_card rows the statistics count:
-- those matching the condition and the intervention as the methods match them (NULL: no filter), whose lead sponsor
-- contains the sponsor words, first posted by date_before, as the strict cutoff as_of shows them (NULL: the
-- current state).
CREATE OR REPLACE MACRO analytics_scope(condition_query, intervention_query, sponsor_query, cutoff, as_of) AS TABLE
WITH wanted AS (
    SELECT (condition_query IS NOT NULL)::INTEGER + (intervention_query IS NOT NULL)::INTEGER AS n
),
m AS (
    SELECT version_no
    FROM (SELECT version_no FROM field_studies_many('condition', [query_norm(condition_query)], [as_of])
          WHERE condition_query IS NOT NULL
          UNION ALL
          SELECT version_no FROM field_studies_many('intervention', [query_norm(intervention_query)], [as_of])
          WHERE intervention_query IS NOT NULL)
    GROUP BY version_no
    HAVING count(*) = (SELECT n FROM wanted)
    UNION ALL
    SELECT version_no FROM study_version WHERE (SELECT n FROM wanted) = 0
)
SELECT t.*
FROM m JOIN trial_card AS t USING (version_no)
WHERE shown_at(t.valid_from, t.valid_to, t.is_current, t.study_first_post_date, cutoff, as_of,
               as_of_exact := t.as_of_exact)
  AND (sponsor_query IS NULL OR contains(search_norm(t.sponsor), search_norm(sponsor_query)));

-- share_of(n, total): n as a fraction of total, 4 decimals; NULL for an empty scope.
CREATE OR REPLACE MACRO share_of(n, total) AS round(n / nullif(total, 0), 4);
