-- search_studies_page(query, condition, intervention, status, location, phase, eligibility_keywords, min_age_days,
-- max_age_days, sex, study_type, date_before, as_of, page_limit, page_offset, id_list, near_versions, sort_order):
-- one page of the studies passing all given filters (NULL = no filter), as search candidates, by relevance (sum of
-- the query, condition and intervention scores) then nct_id, or by sort_order ('StartDate:desc',
-- 'EnrollmentCount:asc'; PrimaryCompletionDate, StudyFirstPostDate; studies without the value last) then relevance.
-- id_list: only these NCT IDs (or aliases); near_versions: the versions with a site near a point (calls/queries.sql
-- (near_versions)). Ages: the trial's window admits the patient (minimum <= min_age, maximum >= max_age; a missing
-- bound admits everyone). Sex: a trial for ALL (or not saying) admits both. Every row also carries total_matches,
-- the number of studies the whole search finds. as_of: the strict cutoff (NULL: the current state). The query,
-- condition and intervention texts are normalised by the caller (query_norm), the eligibility keywords too
-- (search_norm), as sql/methods/_matching.sql says; the query (BasicSearch: `term`) matches as query.term does,
-- words, phrases and concepts. search_studies(... the first thirteen ...): every match, unpaged. Written so that
-- a NULL argument's work drops out of the plan: the Python API prepares one plan per set of given arguments with the
-- absent ones as NULL literals (calls/search_page.sql), and every matcher and filter below is guarded by a test of
-- its own argument that the planner then folds away. term_count: how many of the three texts are given, when the
-- caller knows it as a constant (NULL: counted here). A given text is a read of its bound value, which the planner
-- cannot fold, so without it every plan kept the branch of "no text: every study", estimated hundreds of thousands
-- of matches and built its hash table on trial_card's current rows rather than on the matches.
CREATE OR REPLACE MACRO search_term_count(term_count, text_query, condition_query, intervention_query) AS
    CASE WHEN term_count IS NULL
         THEN (text_query IS NOT NULL)::INTEGER + (condition_query IS NOT NULL)::INTEGER
              + (intervention_query IS NOT NULL)::INTEGER
         ELSE term_count END;

CREATE OR REPLACE MACRO search_matches(text_query, condition_query, intervention_query, status_list,
                                       location_query, phase_list, eligibility_query, patient_min_age_days,
                                       patient_max_age_days, sex_wanted, study_type_wanted, cutoff, as_of,
                                       term_count := NULL, id_list := NULL, near_versions := NULL,
                                       sort_order := NULL, relax_condition := true,
                                       relax_intervention := true, relax_query := true) AS TABLE
WITH
hits AS (
    SELECT version_no, score FROM field_hits_many('term', [text_query], [as_of], relax := relax_query)
    WHERE text_query IS NOT NULL
    UNION ALL
    SELECT version_no, score FROM field_hits_many('condition', [condition_query], [as_of], relax := relax_condition)
    WHERE condition_query IS NOT NULL
    UNION ALL
    SELECT version_no, score
    FROM field_hits_many('intervention', [intervention_query], [as_of], relax := relax_intervention)
    WHERE intervention_query IS NOT NULL
),
m AS (
    SELECT version_no, sum(score) AS relevance
    FROM hits
    GROUP BY version_no
    HAVING count(*) = search_term_count(term_count, text_query, condition_query, intervention_query)
    UNION ALL
    SELECT version_no, 0 FROM study_version
    WHERE search_term_count(term_count, text_query, condition_query, intervention_query) = 0
)
-- Numbers only: the page reads its few NCT IDs from the cards (reading every match's was a third of a call).
-- The current state's rows as a key range (below any past row's key): the scan skips the past rows, and with no
-- other column tested it looks a thousand matched keys up in trial_card's index of shown_key. The filters by
-- version test the match's version_no and the ID list the card's study_no, not trial_card's version_no and nct_id:
-- a filter's subquery stays in the plan when its argument is absent, and the columns it reads are fetched from
-- every card looked up.
SELECT t.study_no, t.card_no, round(m.relevance, 4) AS relevance,
       CASE split_part(sort_order, ':', 1)
            WHEN 'StartDate' THEN t.start_day - DATE '1970-01-01'
            WHEN 'PrimaryCompletionDate' THEN t.completion_day - DATE '1970-01-01'
            WHEN 'StudyFirstPostDate' THEN t.study_first_post_date - DATE '1970-01-01'
            WHEN 'EnrollmentCount' THEN t.enrollment END AS sort_value
FROM (SELECT version_no, relevance, unnest(shown_keys(version_no, as_of)) AS shown_key FROM m) AS m
JOIN trial_card AS t ON t.shown_key = m.shown_key
WHERE shown_at(t.valid_from, t.valid_to, t.shown_key < shown_key(0, false), t.study_first_post_date, cutoff, as_of,
               as_of_exact := t.as_of_exact)
  AND (status_list IS NULL OR list_contains(status_list, t.overall_status))
  AND (phase_list IS NULL OR t.phase_mask & phase_mask(phase_list) <> 0)
  AND (study_type_wanted IS NULL OR t.study_type = study_type_wanted)
  AND (sex_wanted IS NULL OR t.sex IS NULL OR t.sex = 'ALL' OR t.sex = sex_wanted)
  AND (patient_min_age_days IS NULL OR t.minimum_age_days IS NULL OR t.minimum_age_days <= patient_min_age_days)
  AND (patient_max_age_days IS NULL OR t.maximum_age_days IS NULL OR t.maximum_age_days >= patient_max_age_days)
  AND (location_query IS NULL OR m.version_no IN (
        SELECT version_no FROM location_matches(location_query) WHERE location_query IS NOT NULL))
  AND (id_list IS NULL OR t.study_no IN (
        SELECT study_number(unnest(id_list)) WHERE id_list IS NOT NULL
        UNION ALL
        SELECT study_number(nct_id) FROM nct_alias WHERE id_list IS NOT NULL AND list_contains(id_list, alias_nct_id)))
  AND (near_versions IS NULL OR m.version_no IN (SELECT unnest(near_versions)))
  AND (eligibility_query IS NULL OR m.version_no IN (
        SELECT version_no FROM eligibility_text
        WHERE eligibility_query IS NOT NULL AND contains(norm, eligibility_query)));

CREATE OR REPLACE MACRO search_studies_page(text_query, condition_query, intervention_query, status_list,
                                            location_query, phase_list, eligibility_query, patient_min_age_days,
                                            patient_max_age_days, sex_wanted, study_type_wanted, cutoff, as_of,
                                            page_limit, page_offset, term_count := NULL, id_list := NULL,
                                            near_versions := NULL, sort_order := NULL, relax_condition := true,
                                            relax_intervention := true, relax_query := true) AS TABLE
WITH matches AS (
    SELECT * FROM search_matches(text_query, condition_query, intervention_query, status_list, location_query,
                                 phase_list, eligibility_query, patient_min_age_days, patient_max_age_days,
                                 sex_wanted, study_type_wanted, cutoff, as_of, term_count := term_count,
                                 id_list := id_list, near_versions := near_versions, sort_order := sort_order,
                                 relax_condition := relax_condition, relax_intervention := relax_intervention,
                                 relax_query := relax_query)
),
-- Counted apart from the ranking: a count(*) OVER () here once failed inside DuckDB's window operator.
total AS (SELECT count(*) AS total_matches FROM matches),
page AS (
    SELECT * FROM matches
    ORDER BY CASE WHEN ends_with(sort_order, ':asc') THEN sort_value END ASC NULLS LAST,
             CASE WHEN ends_with(sort_order, ':desc') THEN sort_value END DESC NULLS LAST,
             relevance DESC, study_no
    LIMIT page_limit OFFSET page_offset
),
cards AS (  -- the page's trials, read from their cards (a few dozen rows; their list columns are not read)
    SELECT p.*, t.nct_id,
           trial_of(card_json(x.card_head, x.references_json, t.reconstructed_from, t.overall_status, t.why_stopped,
                              t.results_posted, t.as_of_exact, t.enrollment, t.start_date, t.completion_date,
                              t.withheld)) AS trial,
           (x.card_head || '}') ->> '$.official_title' AS official_title
    FROM page AS p
    JOIN trial_card AS t USING (card_no)
    JOIN trial_text AS x ON x.version_no = t.version_no
)
SELECT
    'NCT:' || c.nct_id[4:] AS id,
    c.nct_id,
    coalesce(c.official_title, c.trial.title) AS title,
    c.trial.title AS brief_title,
    c.trial.brief_summary,
    array_to_string(c.trial.phases, '/') AS phase,
    c.trial.phases,
    c.trial.overall_status AS status,
    c.trial.conditions,
    list_transform(c.trial.interventions, i -> i.intervention_name) AS interventions,
    c.trial.sponsor,
    c.trial.enrollment,
    c.trial.start_date,
    c.trial.completion_date AS primary_completion_date,
    c.trial.as_of_exact,
    c.trial.reconstructed_from,
    list_transform(c.trial.withheld, w -> CASE w WHEN 'completion_date' THEN 'primary_completion_date' ELSE w END)
        AS withheld,
    c.trial.version,
    c.relevance,
    (SELECT total_matches FROM total) AS total_matches
FROM cards AS c
ORDER BY CASE WHEN ends_with(sort_order, ':asc') THEN c.sort_value END ASC NULLS LAST,
         CASE WHEN ends_with(sort_order, ':desc') THEN c.sort_value END DESC NULLS LAST,
         c.relevance DESC, c.study_no;

CREATE OR REPLACE MACRO search_studies(text_query, condition_query, intervention_query, status_list, location_query,
                                       phase_list, eligibility_query, patient_min_age_days, patient_max_age_days,
                                       sex_wanted, study_type_wanted, cutoff, as_of := NULL) AS TABLE
SELECT * FROM search_studies_page(query_norm(text_query), query_norm(condition_query), query_norm(intervention_query),
                                  status_list, location_query, phase_list, search_norm(eligibility_query),
                                  patient_min_age_days, patient_max_age_days,
                                  sex_wanted, study_type_wanted, cutoff, as_of, NULL, 0);
