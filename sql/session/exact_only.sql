-- An exact-only reader (Mirror(exact_only=True), --exact-only): at a cutoff, only the studies whose version of that
-- day the warehouse holds are shown; a reconstruction is not (shown_at, sql/schema/as_of_rules.sql).
SET VARIABLE ctmirror_exact_only = true;
