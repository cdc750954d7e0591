-- The v2 server's one-statement queries and pieces. Each query begins with a line `-- name: <name>` and is read by
-- read_sql("serve/queries.sql", "<name>") (ctmirror/core/sqlfiles.py).

-- name: aliases
-- Every old NCT ID and the study it became (nct_alias), for looking one up without a query.
SELECT alias_nct_id, nct_id FROM nct_alias

-- name: clear_near
-- serve_near emptied (near_table.sql), before a search with filter.geo fills it.
DELETE FROM serve_near

-- name: fill_near
-- filter.geo's versions into serve_near: those with a site within $geo_km km of ($geo_lat, $geo_lon), with the
-- distance of the closest (versions_within), read before the search, so a search without one never opens the
-- locations (a filter of the search that read them would read them at every call: a NULL point does not fold).
INSERT INTO serve_near SELECT version_no, km FROM versions_within($geo_lat::DOUBLE, $geo_lon::DOUBLE, $geo_km::DOUBLE)

-- name: among
-- A text term's hits kept where it is ANDed with another ({other}: a subquery of this request; text_leaf.sql's
-- {among}, which is `true` otherwise): those among the other's versions alone.
version_no IN (SELECT version_no FROM {other})

-- name: boost
-- A boosted term ({inner}: a subquery of this request; Essie's term^N): the same versions, each score times $factor.
SELECT version_no, score * $factor::DOUBLE AS score FROM {inner}

-- name: tilt
-- A tilted term ({inner}: a subquery of this request; Essie's TILT[$field], a date area): the same versions, each
-- score times 1 plus how far the date the cutoff shows ($as_of; NULL: the current state) lies along the thirty
-- years from the registry's opening (2000-02-29), a fraction from 0 to 1: fixed ends, so the same warehouse ranks
-- alike on any day; a version without the date keeps its score. sort_value gives a date area's day (days since
-- 1970); $field is one of ours, written in.
WITH dated AS (
    SELECT version_no,
           sort_value($field, NULL, enrollment, start_day, completion_day, study_completion_date,
                      study_first_post_date, last_update_post_date, results_first_post_date, $as_of::DATE,
                      results_posted, submission_dates)
           - date_diff('day', DATE '1970-01-01', DATE '2000-02-29') AS days_open
    FROM trial_card
    WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, $as_of::DATE,
                   as_of_exact := as_of_exact)
      AND version_no IN (SELECT version_no FROM {inner})
)
SELECT f.version_no,
       f.score * (1 + coalesce(greatest(0.0, least(1.0, d.days_open
                                                       / date_diff('day', DATE '2000-02-29', DATE '2030-02-28'))), 0))
           AS score
FROM {inner} AS f
LEFT JOIN dated AS d USING (version_no)

-- name: records
-- The stored records (the registry's JSON, as received) of some versions, from the one file holding them ({file}:
-- a quoted path of the warehouse's own) and by NCT ID ({nct_ids}: quoted IDs our own page query returned, checked
-- to be NCT IDs): literals, so DuckDB reads only the row groups that hold them. The caller keeps the versions asked.
SELECT nct_id, content_hash, raw FROM read_parquet({file}) WHERE nct_id IN ({nct_ids})

-- name: search_areas
-- /api/v2/studies/search-areas: the search index's areas, by field, the heaviest first.
SELECT field, area, weight FROM search_area ORDER BY field, weight DESC, area
