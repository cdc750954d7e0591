-- analytics_scope(condition, intervention, sponsor, date_before, as_of, phases, statuses, location, sponsor_classes,
-- study_type): the trial_card rows the statistics count: those matching the condition and the intervention as the
-- methods match them (NULL: no filter), whose lead sponsor contains the sponsor words, first posted by date_before,
-- as the strict cutoff as_of shows them (NULL: the current state), and passing search's filters (search_studies):
-- any of the phases, any of the statuses, a site at the location ('Germany', 'Boston, MA'), any of the lead
-- sponsor's classes, the study type. Every statistic takes these as named arguments (phase_list := [...],
-- status_list, location_query, sponsor_class_list, study_type_wanted), NULL by default.
CREATE OR REPLACE MACRO analytics_scope(condition_query, intervention_query, sponsor_query, cutoff, as_of, phase_list,
                                        status_list, location_query, sponsor_class_list, study_type_wanted) AS TABLE
WITH wanted AS (
    SELECT (condition_query IS NOT NULL)::INTEGER + (intervention_query IS NOT NULL)::INTEGER AS n
),
m AS (  -- the matched versions, when a condition or an intervention is given
    SELECT version_no
    FROM (SELECT version_no FROM field_studies_many('condition', [query_norm(condition_query)], [as_of])
          WHERE condition_query IS NOT NULL
          UNION ALL
          SELECT version_no FROM field_studies_many('intervention', [query_norm(intervention_query)], [as_of])
          WHERE intervention_query IS NOT NULL)
    GROUP BY version_no
    HAVING count(*) = (SELECT n FROM wanted)
),
-- The rows are chosen on the columns the rules and filters read, the matched versions' looked up by their keys
-- (shown_keys) as the methods look them up: trial_card is sorted by them, so the scan reads the row groups of those
-- versions alone (joined on version_no, it read all of trial_card). The chosen rows are then read by number, so a
-- statistic reads the columns it counts alone: fetched through the rules' join, every column of every row was read.
chosen AS (
    SELECT t.card_no
    FROM trial_card AS t
    WHERE ((condition_query IS NULL AND intervention_query IS NULL)
           OR t.shown_key IN (SELECT unnest(shown_keys(version_no, as_of)) FROM m))
      AND shown_at(t.valid_from, t.valid_to, t.is_current, t.study_first_post_date, cutoff, as_of,
                   as_of_exact := t.as_of_exact)
      AND (sponsor_query IS NULL OR contains(search_norm(t.sponsor), search_norm(sponsor_query)))
      AND (status_list IS NULL OR list_contains(status_list, t.overall_status))
      AND (phase_list IS NULL OR t.phase_mask & phase_mask(phase_list) <> 0)
      AND (sponsor_class_list IS NULL OR list_contains(sponsor_class_list, t.sponsor_class))
      AND (study_type_wanted IS NULL OR t.study_type = study_type_wanted)
      AND (location_query IS NULL OR t.version_no IN (
            SELECT version_no FROM location_matches(location_query) WHERE location_query IS NOT NULL))
)
SELECT t.* FROM trial_card AS t WHERE t.card_no IN (SELECT card_no FROM chosen);

-- share_of(n, total): n as a fraction of total, 4 decimals; NULL for an empty scope.
CREATE OR REPLACE MACRO share_of(n, total) AS round(n / nullif(total, 0), 4);
