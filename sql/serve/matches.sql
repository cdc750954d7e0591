-- The studies a /api/v2/studies request finds (ctmirror/server/v2/search.py), the prefix of page.sql: the trial_card rows
-- shown at $as_of (NULL: the current state) among the versions the Essie queries matched (the request's terms, a
-- subquery spliced in below, with scores; $has_query false: no query, every study) passing the filters (each NULL:
-- no filter):
-- $statuses (filter.overallStatus, aggFilters status), $phases, $sexes, $study_types, $results (aggFilters),
-- $ids (filter.ids: NCT IDs, with the studies their aliases name: ids_with_aliases.sql), and $near_given (filter.geo:
-- the versions with a site that near, in serve_near: serve/queries.sql's fill_near).
-- geoDecay ($geo_decay true: sorting by relevance with filter.geo): decayed_key1, the first key from a study's
-- relevance (1 with no query) times geo_decay($decay_func, ...) of the distance of its closest site (serve_near), which
-- page.sql sorts by unless more than 10,000 studies are found, as the API does.
-- Sort keys: $sort1/$sort2 name a field (or 'relevance'; see sort_value), $dir1/$dir2 are 1 (ascending) or -1
-- (descending). An absent filter, cutoff or sort field is written in as NULL (ctmirror/server/v2/search.py, _page).
WITH found AS (SELECT version_no, score FROM {found}),
found_keys AS (  -- the trial_card keys the matched versions show under at $as_of, each with its version's score
    SELECT score AS found_score, unnest(shown_keys(version_no, $as_of::DATE)) AS found_key
    FROM found
    WHERE $has_query::BOOLEAN
),
candidates AS (
    SELECT t.*, k.found_score
    FROM trial_card AS t
    -- One join gives each card its score: with a query it is an inner join (the test below rejects a NULL key),
    -- which hands the scan of trial_card the matched keys' range and filter; without one, found_keys is empty.
    -- (A semi join for the cards and a second join for the scores cost half as much again at 40,000 matches.)
    LEFT JOIN found_keys AS k ON k.found_key = t.shown_key
    -- The current state's rows as a key range (below any past row's key): the scan skips the past rows, and with
    -- no other column tested it looks a thousand matched keys up in trial_card's index of shown_key.
    WHERE shown_at(t.valid_from, t.valid_to, t.shown_key < shown_key(0, false), t.study_first_post_date, NULL,
                   $as_of::DATE, as_of_exact := t.as_of_exact)
      AND (NOT $has_query::BOOLEAN OR k.found_key IS NOT NULL)
      AND ($statuses::VARCHAR[] IS NULL OR list_contains($statuses::VARCHAR[], t.overall_status))
      AND ($phases::VARCHAR[] IS NULL OR list_has_any(t.phases, $phases::VARCHAR[]))
      AND ($sexes::VARCHAR[] IS NULL OR list_contains($sexes::VARCHAR[], coalesce(t.sex, 'ALL')))
      AND ($study_types::VARCHAR[] IS NULL OR list_contains($study_types::VARCHAR[], t.study_type))
      AND ($results::BOOLEAN IS NULL OR t.results_posted = $results::BOOLEAN)
      AND ($ids::VARCHAR[] IS NULL OR list_contains($ids::VARCHAR[], t.nct_id))
      AND (NOT $near_given::BOOLEAN OR t.version_no IN (SELECT version_no FROM serve_near))
),
decayed AS (  -- by card: a version may show on more than one
    SELECT c.card_no,
           coalesce(c.found_score, CASE WHEN $has_query::BOOLEAN THEN 0 ELSE 1 END)
           * geo_decay($decay_func, n.km, $decay_scale::DOUBLE, $decay_offset::DOUBLE, $decay::DOUBLE) AS score
    FROM candidates AS c
    JOIN serve_near AS n USING (version_no)
    WHERE $geo_decay::BOOLEAN
),
keyed AS (
    SELECT c.* EXCLUDE (found_score), coalesce(c.found_score, 0) AS score, round(d.score, 4) AS decayed_score,
           sort_value($sort1, c.found_score, c.enrollment, c.start_day, c.completion_day,
                      c.study_completion_date, c.study_first_post_date, c.last_update_post_date,
                      c.results_first_post_date, $as_of::DATE, c.results_posted, c.submission_dates) AS value1,
           sort_value($sort2, c.found_score, c.enrollment, c.start_day, c.completion_day,
                      c.study_completion_date, c.study_first_post_date, c.last_update_post_date,
                      c.results_first_post_date, $as_of::DATE, c.results_posted, c.submission_dates) AS value2
    FROM candidates AS c
    LEFT JOIN decayed AS d ON $geo_decay::BOOLEAN AND d.card_no = c.card_no  -- (a constant: folded away without)
),
matches AS (
    SELECT * EXCLUDE (value1, value2, decayed_score), value1 * $dir1::INTEGER AS key1,
           value2 * $dir2::INTEGER AS key2, decayed_score * $dir1::INTEGER AS decayed_key1
    FROM keyed
)
