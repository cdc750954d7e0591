-- get_landscape(condition, date_before, top_n): one row. Trials for the condition with a phase among
-- EARLY_PHASE1..PHASE4; competitors grouped by lead sponsor + drug name (case-insensitive) over Drug and
-- Biological interventions (placebo excluded), ranked by max phase then total enrollment (descending), then
-- sponsor and drug; phase_distribution keyed by each trial's display phase (sums to the total);
-- recent_starts: trials started from 1 January two calendar years before the reference date (date_before,
-- else today) up to the reference date, newest first.
-- status_list, phase_list, location_query: search's filters (any of the statuses, any of the phases, a site at the
-- location), NULL for none. get_landscape_many takes each argument as a list (one entry per call; as_ofs: each
-- call's strict cutoff, NULL for the current state; the filters' lists may be left out) and answers every call, by
-- its position k from 1; today (default current_date) is the
-- reference day of the calls without a date_before. current_state: true (a constant) when no call has a cutoff or
-- an as_of, which lets the planner drop the cutoff rules from the plan (sql/schema/as_of_rules.sql); any_filter:
-- false (a constant) when no call has a status, phase or location, which drops the filters and their matcher;
-- relax_conditions: false (a constant) when no condition has two words or more (field_hits_many).
CREATE OR REPLACE MACRO get_landscape_many(condition_queries, cutoffs, as_ofs, competitor_limits,
                                           today := current_date, current_state := false, status_lists := NULL,
                                           phase_lists := NULL, location_queries := NULL,
                                           any_filter := true, relax_conditions := true) AS TABLE
WITH calls AS (
    SELECT generate_subscripts(condition_queries, 1) AS k, unnest(cutoffs)::DATE AS cutoff,
           unnest(as_ofs)::DATE AS as_of, unnest(competitor_limits) AS competitor_limit,
           coalesce(unnest(cutoffs)::DATE, today::DATE) AS reference_day,
           unnest(coalesce(status_lists, list_transform(condition_queries, q -> NULL)))::VARCHAR[] AS status_list,
           unnest(coalesce(phase_lists, list_transform(condition_queries, q -> NULL)))::VARCHAR[] AS phase_list,
           unnest(coalesce(location_queries, list_transform(condition_queries, q -> NULL)))::VARCHAR AS location_query
),
checked_calls AS (SELECT * FROM calls WHERE current_state_holds(current_state, cutoff, as_of)),
located AS (  -- the calls' locations' studies; any_filter false (a constant: no call has one) plans none
    SELECT k, version_no FROM location_matches_many((SELECT list(location_query ORDER BY k) FROM calls))
    WHERE any_filter
),
-- The matched trials carry integers and short codes only: every column read here is read for every row of
-- trial_card a match falls in, so the texts (sponsor, start date) are read for the few rows shown (named).
trials AS (
    SELECT m.k, t.version_no, t.card_no, t.sponsor_key, t.phase, t.phase_rank, t.overall_status, t.enrollment,
           t.start_day, t.as_of_exact
    FROM (SELECT m.k, m.version_no, c.cutoff, c.as_of, c.status_list, c.phase_list, c.location_query,
                 unnest(shown_keys_in(m.version_no, c.as_of, current_state)) AS shown_key
          FROM field_studies_many('condition', condition_queries, as_ofs, relax := relax_conditions) AS m
          JOIN checked_calls AS c USING (k)) AS m
    JOIN trial_card AS t ON t.shown_key = m.shown_key
    WHERE shown_in(t.valid_from, t.valid_to, t.shown_key < shown_key(0, false), t.study_first_post_date, m.cutoff,
                   m.as_of, current_state, as_of_exact := t.as_of_exact)
      AND t.phase_rank >= 1  -- a phase among EARLY_PHASE1..PHASE4
      AND (NOT any_filter OR (
            (m.status_list IS NULL OR list_contains(m.status_list, t.overall_status))
            AND (m.phase_list IS NULL OR t.phase_mask & phase_mask(m.phase_list) <> 0)
            AND (m.location_query IS NULL OR EXISTS (
                SELECT 1 FROM located AS l WHERE l.k = m.k AND l.version_no = t.version_no))))
),
competitors AS (
    -- Sponsor and drug (case-insensitive) as their integer keys, which order as the names do.
    SELECT
        t.k,
        t.sponsor_key,
        g.drug_key,
        min(t.card_no) AS sponsor_card,  -- any row of the sponsor's: its name
        min(g.drug_name) AS drug_name,
        min(g.drug_type) AS drug_type,
        max(t.phase_rank) AS max_rank,
        count(*) AS trial_count,
        -- (not list(DISTINCT ... ORDER BY ...), which builds a hash table and a sort of its own in every call)
        list_sort(list_distinct(list(t.overall_status))) AS statuses,
        sum(coalesce(t.enrollment, 0)) AS total_enrollment,
        -- the latest start's row (of those on that day, the first)
        arg_max(t.card_no, {'day': t.start_day, 'card': -t.card_no}) FILTER (WHERE t.start_day IS NOT NULL)
            AS start_card,
        bool_and(t.as_of_exact) AS as_of_exact
    FROM trials AS t
    JOIN trial_drug_key AS g USING (version_no)
    GROUP BY t.k, t.sponsor_key, g.drug_key
),
ranked AS (
    SELECT c.*
    FROM competitors AS c
    JOIN calls USING (k)
    QUALIFY row_number() OVER (PARTITION BY c.k ORDER BY c.max_rank DESC, c.total_enrollment DESC, c.sponsor_key,
                                                          c.drug_key) <= calls.competitor_limit
),
named AS (
    SELECT r.*, s.sponsor, d.start_date AS most_recent_start
    FROM ranked AS r
    JOIN trial_card AS s ON s.card_no = r.sponsor_card
    LEFT JOIN trial_card AS d ON d.card_no = r.start_card
),
recent_trials AS (
    SELECT t.*
    FROM trials AS t
    JOIN calls USING (k)
    WHERE t.start_day >= make_date(year(calls.reference_day) - 2, 1, 1) AND t.start_day <= calls.reference_day
),
recent AS (  -- the few recent trials' texts, read for them alone
    SELECT r.*, c.sponsor, c.start_date, c.nct_id, c.content_hash AS version, c.first_drug AS drug,
           c.reconstructed_from
    FROM recent_trials AS r
    JOIN trial_card AS c USING (card_no)
)
SELECT
    calls.k,
    coalesce(total.n, 0) AS total_trial_count,
    coalesce(listed.competitors, []) AS competitors,
    coalesce(phases.phase_distribution, MAP {}) AS phase_distribution,
    coalesce(starts.recent_starts, []) AS recent_starts
FROM calls
LEFT JOIN (SELECT k, count(*) AS n FROM trials GROUP BY k) AS total USING (k)
LEFT JOIN (
    SELECT k, list({'sponsor': sponsor, 'drug_name': drug_name, 'drug_type': drug_type,
                    'max_phase': phase_label(['EARLY_PHASE1', 'PHASE1', 'PHASE2', 'PHASE3', 'PHASE4'][max_rank]),
                    'trial_count': trial_count, 'statuses': statuses,
                    'total_enrollment': total_enrollment, 'most_recent_start': most_recent_start,
                    'as_of_exact': as_of_exact}
                   ORDER BY max_rank DESC, total_enrollment DESC, sponsor_key, drug_key) AS competitors
    FROM named GROUP BY k
) AS listed USING (k)
LEFT JOIN (
    SELECT k, map(list(phase ORDER BY phase), list(n ORDER BY phase)) AS phase_distribution
    FROM (SELECT k, phase, count(*) AS n FROM trials GROUP BY k, phase)
    GROUP BY k
) AS phases USING (k)
LEFT JOIN (
    SELECT k, list({'nct_id': nct_id, 'sponsor': sponsor, 'drug': drug, 'phase': phase,
                    'start_date': start_date, 'as_of_exact': as_of_exact,
                    'reconstructed_from': strftime(reconstructed_from, '%Y-%m-%d'), 'version': version}
                   ORDER BY start_day DESC, nct_id) AS recent_starts
    FROM recent GROUP BY k
) AS starts USING (k)
ORDER BY calls.k;

CREATE OR REPLACE MACRO get_landscape(condition_query, cutoff, competitor_limit, as_of := NULL, status_list := NULL,
                                      phase_list := NULL, location_query := NULL) AS TABLE
SELECT * EXCLUDE (k) FROM get_landscape_many([query_norm(condition_query)], [cutoff], [as_of], [competitor_limit],
                                             status_lists := [status_list], phase_lists := [phase_list],
                                             location_queries := [location_query]);
