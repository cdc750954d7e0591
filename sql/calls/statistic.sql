-- How the Python API calls a statistic ({statistic}: one of ctmirror.registry.STATISTIC_NAMES, ours): each argument
-- read from statistic_args, or the NULL literal where the call does not give it (ctmirror.answers.execute_shaped).
SELECT * FROM {statistic}($condition, $intervention, $sponsor, $date_before::DATE, as_of := $as_of::DATE)
