-- How the Python API calls a statistic ({statistic}: one of ctmirror.read.registry.STATISTIC_NAMES, ours): each
-- argument read from statistic_args, or the NULL literal where the call does not give it
-- (ctmirror.read.answers.execute_shaped).
SELECT * FROM {statistic}($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE,
                          phase_list := $phase::VARCHAR[], status_list := $status::VARCHAR[],
                          location_query := $location, sponsor_class_list := $sponsor_class::VARCHAR[],
                          study_type_wanted := $study_type)
