-- The macro of every statistic: {name}(condition, intervention, sponsor, date_before, as_of; named, search's filters),
-- whose body, sql/stats/{name}.sql, reads `scope`, the trial_card rows it counts (analytics_scope, _scope.sql).
-- ctmirror.core.sqlfiles.macro_sql writes in {name} and {body}, both ours.
CREATE OR REPLACE MACRO {name}(condition_query, intervention_query, sponsor_query, cutoff, as_of := NULL,
    phase_list := NULL, status_list := NULL, location_query := NULL, sponsor_class_list := NULL,
    study_type_wanted := NULL) AS TABLE
WITH scope AS (SELECT * FROM analytics_scope(condition_query, intervention_query, sponsor_query, cutoff, as_of,
                                             phase_list, status_list, location_query, sponsor_class_list,
                                             study_type_wanted)),
{body}
