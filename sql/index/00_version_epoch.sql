-- version_epoch: for every version, the cutoffs at which a strict answer shows it, and what it shows then: one row
-- per span of cutoffs [valid_from, valid_to) over which nothing the methods read changes, plus is_current for the
-- row the current state shows. A method's call at any cutoff reads the rows valid on it (shown_at), so answering
-- at a new cutoff builds nothing.
-- Which version: on a cutoff, the newest version last updated on or before it (exact: as_of_exact); before the
-- first update, from the study's first posting, the oldest version, reconstructed (sql/schema/as_of_rules.sql).
-- Within a version's span the shown values change only on the dates the rules compare the cutoff with (start,
-- event, status verified + 2 years, results first posted), so the span is cut there, each piece evaluated at its
-- first day, and equal neighbours merged. What the registry recorded only after a piece's first day is withheld,
-- never relabelled (`withheld`: the names of the studies' columns left out): a date after it not typed ESTIMATED
-- (ACTUAL, or untyped, as the records' withholding: ctmirror/server/records.py), and in a reconstruction an
-- ACTUAL enrollment (reached later) and a stop reason the status shown does not have. A reconstruction names the
-- last update of the version it was made from (reconstructed_from).
-- $strict_epochs false (a frozen snapshot, already as of its cutoff): the current rows only.
CREATE TABLE version_epoch AS
WITH v AS (
    SELECT sv.version_no, sv.study_no, sv.is_current, sv.ingested_at, s.nct_id, s.content_hash, s.overall_status,
           s.last_known_status, s.why_stopped, s.has_results, s.results_first_post_date, s.enrollment_type,
           s.last_update_post_date, s.study_first_post_date, s.start_date, s.status_verified_date,
           -- dates not typed as a plan (ACTUAL, or untyped as in older records): withheld after the cutoff
           CASE WHEN s.start_date_type IS DISTINCT FROM 'ESTIMATED' THEN s.start_date END AS start_not_plan,
           CASE WHEN s.primary_completion_date_type IS DISTINCT FROM 'ESTIMATED' THEN s.primary_completion_date END
               AS primary_completion_not_plan,
           CASE WHEN s.completion_date_type IS DISTINCT FROM 'ESTIMATED' THEN s.completion_date END
               AS completion_not_plan,
           coalesce(s.primary_completion_date, s.completion_date, s.last_update_post_date) AS event_day,
           known_status(s.overall_status, s.last_known_status) AS known
    FROM study_version AS sv
    JOIN all_studies AS s USING (nct_id, content_hash)
),
first_post AS (SELECT study_no, min(study_first_post_date) AS first_posted FROM v GROUP BY study_no),
exact_shown AS (  -- per study and update date, the version shown from that date: the one ingested last
    SELECT version_no, study_no, last_update_post_date AS updated
    FROM v
    WHERE last_update_post_date IS NOT NULL AND $strict_epochs
    QUALIFY row_number() OVER (PARTITION BY study_no, last_update_post_date ORDER BY ingested_at DESC, content_hash) = 1
),
exact_spans AS (
    SELECT version_no, study_no, updated AS span_from,
           coalesce(lead(updated) OVER (PARTITION BY study_no ORDER BY updated), 'infinity'::DATE) AS span_to
    FROM exact_shown
),
first_update AS (SELECT study_no, min(updated) AS updated FROM exact_shown GROUP BY study_no),
reconstructed_spans AS (  -- before the first update: the oldest version (by update, then ingested last, hash)
    SELECT v.version_no, v.study_no, NULL::DATE AS span_from, coalesce(u.updated, 'infinity'::DATE) AS span_to
    FROM v
    LEFT JOIN first_update AS u USING (study_no)
    WHERE $strict_epochs
    QUALIFY row_number() OVER (PARTITION BY study_no
                               ORDER BY last_update_post_date ASC NULLS LAST, ingested_at DESC, content_hash) = 1
),
spans AS (  -- nothing is shown before the study was first posted
    SELECT s.version_no, greatest(s.span_from, f.first_posted) AS span_from, s.span_to, s.exact
    FROM (SELECT *, true AS exact FROM exact_spans UNION ALL SELECT *, false FROM reconstructed_spans) AS s
    JOIN first_post AS f USING (study_no)
    WHERE f.first_posted IS NOT NULL AND greatest(s.span_from, f.first_posted) < s.span_to
),
pieces AS (
    SELECT sp.version_no, sp.exact, sp.span_to,
           list_sort(list_distinct(list_filter(
               [sp.span_from, v.start_date, v.event_day, unknown_from(v.status_verified_date), v.results_first_post_date,
                v.completion_not_plan],
               d -> d >= sp.span_from AND d < sp.span_to))) AS starts
    FROM spans AS sp
    JOIN v USING (version_no)
),
evaluated AS (
    SELECT p.version_no, p.valid_from, p.valid_to, p.exact AS as_of_exact,
           status_at(v.known, p.exact, v.start_date, v.event_day, v.status_verified_date, p.valid_from)
               AS overall_status,
           v.why_stopped, v.has_results, v.results_first_post_date, v.enrollment_type, v.last_update_post_date,
           v.start_not_plan, v.primary_completion_not_plan, v.completion_not_plan
    FROM (SELECT version_no, exact, starts[i] AS valid_from, coalesce(starts[i + 1], span_to) AS valid_to
          FROM (SELECT *, generate_subscripts(starts, 1) AS i FROM pieces)) AS p
    JOIN v USING (version_no)
),
shown AS (  -- what each piece shows (the columns of trial_card a cutoff changes)
    SELECT version_no, valid_from, valid_to,
           {'overall_status': overall_status,
            'why_stopped': CASE WHEN as_of_exact OR is_stopped(overall_status) THEN why_stopped END,
            'has_results': has_results AND coalesce(results_first_post_date <= valid_from, as_of_exact),
            'results_first_post_date': CASE WHEN results_first_post_date <= valid_from THEN results_first_post_date END,
            'enrollment_type': CASE WHEN as_of_exact OR enrollment_type IS DISTINCT FROM 'ACTUAL'
                                    THEN enrollment_type END,
            'last_update_post_date': CASE WHEN as_of_exact THEN last_update_post_date END,
            'as_of_exact': as_of_exact,
            'reconstructed_from': CASE WHEN NOT as_of_exact THEN last_update_post_date END,
            'withheld': list_filter([
                CASE WHEN NOT (as_of_exact OR is_stopped(overall_status)) AND why_stopped IS NOT NULL
                     THEN 'why_stopped' END,
                CASE WHEN NOT as_of_exact AND enrollment_type = 'ACTUAL' THEN 'enrollment' END,
                CASE WHEN start_not_plan > valid_from THEN 'start_date' END,
                CASE WHEN primary_completion_not_plan > valid_from THEN 'primary_completion_date' END,
                CASE WHEN completion_not_plan > valid_from THEN 'completion_date' END], w -> w IS NOT NULL)} AS shows
    FROM evaluated
),
merged AS (  -- neighbouring pieces of a version that show the same, as one
    SELECT version_no, min(valid_from) AS valid_from, max(valid_to) AS valid_to, any_value(shows) AS shows
    FROM (SELECT *, sum(changed) OVER (PARTITION BY version_no ORDER BY valid_from) AS run
          FROM (SELECT *, (shows IS DISTINCT FROM lag(shows) OVER (PARTITION BY version_no ORDER BY valid_from))::INTEGER
                          AS changed
                FROM shown))
    GROUP BY version_no, run
),
current_shows AS (  -- the current state shows the current version as `studies` has it
    SELECT v.version_no,
           {'overall_status': s.overall_status, 'why_stopped': s.why_stopped, 'has_results': s.has_results,
            'results_first_post_date': s.results_first_post_date, 'enrollment_type': s.enrollment_type,
            'last_update_post_date': s.last_update_post_date, 'as_of_exact': s.as_of_exact,
            'reconstructed_from': s.reconstructed_from, 'withheld': s.withheld} AS shows
    FROM v
    JOIN studies AS s ON s.nct_id = v.nct_id AND s.content_hash = v.content_hash
    WHERE v.is_current
),
marked AS (  -- the last strict row of a current version is the current state's row where it shows the same
    SELECT m.*, coalesce(m.valid_to = 'infinity'::DATE AND c.shows IS NOT DISTINCT FROM m.shows, false) AS is_current
    FROM merged AS m
    LEFT JOIN current_shows AS c USING (version_no)  -- equality alone: a hash join
)
SELECT version_no, valid_from, valid_to, is_current, unnest(shows)
FROM (
    SELECT * FROM marked
    UNION ALL
    SELECT c.version_no, NULL::DATE, NULL::DATE, c.shows, true
    FROM current_shows AS c
    WHERE c.version_no NOT IN (SELECT version_no FROM marked WHERE is_current)
)
ORDER BY version_no, valid_from NULLS LAST;
