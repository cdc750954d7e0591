-- What one Essie term, or a combination of terms, matched: a temporary table of the request's ({name}: ours, one per
-- term), its versions with their scores, from the query spliced in below: one of the *_leaf.sql files or
-- shown_versions.sql (with their values bound), or combine_and.sql, combine_or.sql, combine_not.sql.
CREATE OR REPLACE TEMP TABLE {name} AS
{query}
