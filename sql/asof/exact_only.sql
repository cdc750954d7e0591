-- An exact-only snapshot (`ctmirror snapshot --exact-only`): the version map keeps only the studies whose version of
-- the cutoff day is held; reconstructed ones are left out of every table.
DELETE FROM current_versions WHERE NOT as_of_exact
