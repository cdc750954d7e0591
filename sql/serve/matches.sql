-- The studies a /api/v2/studies request finds (ctmirror/server/v2.py), the prefix of page.sql: the trial_card rows
-- shown at $as_of (NULL: the current state) among the versions the Essie queries matched (the request's terms, a
-- subquery spliced in below, with scores; $has_query false: no query, every study) passing the filters (each NULL:
-- no filter):
-- $statuses (filter.overallStatus, aggFilters status), $phases, $sexes, $study_types, $results (aggFilters),
-- $ids (filter.ids: NCT IDs or aliases), and $geo_lat/$geo_lon/$geo_km (filter.geo: a site within that many km).
-- Sort keys: $sort1/$sort2 name a field (or 'relevance'), $dir1/$dir2 are 1 (ascending) or -1 (descending).
WITH found AS (SELECT version_no, score FROM {found}),
near AS (
    SELECT DISTINCT v.version_no
    FROM all_locations AS l
    JOIN study_version AS v USING (nct_id, content_hash)
    WHERE $geo_lat::DOUBLE IS NOT NULL AND l.lat IS NOT NULL AND l.lon IS NOT NULL
      AND 6371.0088 * 2 * asin(sqrt(
              pow(sin(radians(l.lat - $geo_lat::DOUBLE) / 2), 2)
              + cos(radians($geo_lat::DOUBLE)) * cos(radians(l.lat)) * pow(sin(radians(l.lon - $geo_lon::DOUBLE) / 2), 2)))
          <= $geo_km::DOUBLE
),
candidates AS (
    SELECT t.*
    FROM trial_card AS t
    WHERE shown_at(t.valid_from, t.valid_to, t.is_current, t.study_first_post_date, NULL, $as_of::DATE)
      AND (NOT $has_query::BOOLEAN OR t.version_no IN (SELECT version_no FROM found))
      AND ($statuses::VARCHAR[] IS NULL OR list_contains($statuses::VARCHAR[], t.overall_status))
      AND ($phases::VARCHAR[] IS NULL OR list_has_any(t.phases, $phases::VARCHAR[]))
      AND ($sexes::VARCHAR[] IS NULL OR list_contains($sexes::VARCHAR[], coalesce(t.sex, 'ALL')))
      AND ($study_types::VARCHAR[] IS NULL OR list_contains($study_types::VARCHAR[], t.study_type))
      AND ($results::BOOLEAN IS NULL OR t.results_posted = $results::BOOLEAN)
      AND ($ids::VARCHAR[] IS NULL OR t.nct_id IN (SELECT unnest($ids::VARCHAR[]))
           OR t.nct_id IN (SELECT nct_id FROM nct_alias WHERE alias_nct_id IN (SELECT unnest($ids::VARCHAR[]))))
      AND ($geo_lat::DOUBLE IS NULL OR t.version_no IN (SELECT version_no FROM near))
),
keyed AS (
    SELECT c.*, coalesce(f.score, 0) AS score,
           -- each sort field's value as a number, for the two sort items ($sort1, $sort2) in one expression
           list_transform([$sort1::VARCHAR, $sort2::VARCHAR], field -> CASE field
                WHEN 'relevance' THEN round(coalesce(f.score, 0), 4)
                WHEN 'EnrollmentCount' THEN c.enrollment
                WHEN 'StartDate' THEN date_diff('day', DATE '1970-01-01', c.start_day)
                WHEN 'PrimaryCompletionDate' THEN date_diff('day', DATE '1970-01-01', c.completion_day)
                WHEN 'CompletionDate' THEN date_diff('day', DATE '1970-01-01', partial_date(c.study_completion_date))
                WHEN 'StudyFirstPostDate' THEN date_diff('day', DATE '1970-01-01', c.study_first_post_date)
                WHEN 'LastUpdatePostDate' THEN date_diff('day', DATE '1970-01-01', c.last_update_post_date)
                WHEN 'ResultsFirstPostDate' THEN date_diff('day', DATE '1970-01-01', c.results_first_post_date)
           END) AS keys
    FROM candidates AS c
    LEFT JOIN found AS f USING (version_no)
),
matches AS (
    SELECT * EXCLUDE (keys), keys[1] * $dir1::INTEGER AS key1, keys[2] * $dir2::INTEGER AS key2 FROM keyed
)
