-- analytics_scope(condition, intervention, sponsor, date_before): the trial cards the statistics count: those
-- matching the condition and the intervention as the methods match them (NULL: no filter), whose lead sponsor
-- contains the sponsor words, first posted by date_before (for strict as-of answers, run on a snapshot).
CREATE OR REPLACE MACRO analytics_scope(condition_query, intervention_query, sponsor_query, cutoff) AS TABLE
WITH wanted AS (
    SELECT (condition_query IS NOT NULL)::INTEGER + (intervention_query IS NOT NULL)::INTEGER AS n
),
m AS (
    SELECT nct_id
    FROM (SELECT nct_id FROM field_matches('condition', condition_query)
          UNION ALL SELECT nct_id FROM field_matches('intervention', intervention_query))
    GROUP BY nct_id
    HAVING count(*) = (SELECT n FROM wanted)
    UNION ALL
    SELECT nct_id FROM trial_card WHERE (SELECT n FROM wanted) = 0
)
SELECT t.*
FROM m JOIN trial_card AS t USING (nct_id)
WHERE in_scope(t.study_first_post_date, cutoff)
  AND (sponsor_query IS NULL OR contains(search_norm(t.sponsor), search_norm(sponsor_query)));

-- share_of(n, total): n as a fraction of total, 4 decimals; NULL for an empty scope.
CREATE OR REPLACE MACRO share_of(n, total) AS round(n / nullif(total, 0), 4);
