-- Scalar macros shared by normalisation, the catalog's views and the methods.

-- partial_date(s): the registry's partial date ('2019', '2019-06', '2019-06-14') as a comparable DATE,
-- the first day of the period it names; NULL when absent.
-- Padding '2019' with '-01-01' and '2019-06' with '-01' leaves one cast and no branches.
CREATE OR REPLACE MACRO partial_date(s) AS
    try_cast(s || substr('-01-01', length(s) - 3) AS DATE);

-- date_precision(s): 'year', 'month' or 'day', by how much of the date the registry gave.
CREATE OR REPLACE MACRO date_precision(s) AS
    CASE length(s) WHEN 4 THEN 'year' WHEN 7 THEN 'month' WHEN 10 THEN 'day' END;

-- phase_label(p): the registry's display name of one phase enum value.
CREATE OR REPLACE MACRO phase_label(p) AS
    CASE p
        WHEN 'EARLY_PHASE1' THEN 'Early Phase 1'
        WHEN 'PHASE1' THEN 'Phase 1' WHEN 'PHASE2' THEN 'Phase 2'
        WHEN 'PHASE3' THEN 'Phase 3' WHEN 'PHASE4' THEN 'Phase 4'
        WHEN 'NA' THEN 'Not Applicable'
    END;

-- display_phase(phases): 'Phase 1/Phase 2' for ['PHASE1','PHASE2']; '' when the registry gives no phase.
CREATE OR REPLACE MACRO display_phase(phases) AS
    coalesce(array_to_string(list_transform(phases, p -> phase_label(p)), '/'), '');

-- phase_rank(phases): orders trials by how far they got: NA/none 0, Early Phase 1 1, Phase 1 2, ... Phase 4 6.
-- A Phase 1/Phase 2 trial ranks as Phase 2.
CREATE OR REPLACE MACRO phase_rank(phases) AS
    coalesce(list_max(list_transform(phases, p -> CASE p
        WHEN 'EARLY_PHASE1' THEN 1 WHEN 'PHASE1' THEN 2 WHEN 'PHASE2' THEN 3
        WHEN 'PHASE3' THEN 4 WHEN 'PHASE4' THEN 5 ELSE 0 END)), 0);

-- intervention_type_label(t): 'DIETARY_SUPPLEMENT' -> 'Dietary Supplement', as the registry displays it.
CREATE OR REPLACE MACRO intervention_type_label(t) AS
    array_to_string(list_transform(string_split(lower(t), '_'), w -> upper(w[1]) || w[2:]), ' ');

-- enum_search_text(area, value): the words an enumeration's value is searched by, as the registry displays it
-- ('PLACEBO_COMPARATOR' → 'Placebo Comparator', 'PHASE2' → 'Phase 2', 'PARALLEL' → 'Parallel Assignment', masking
-- 'NONE' → 'None (Open Label)'): Essie's enum areas (InterventionType, ArmGroupType, Phase, StdAge, the design's) are
-- found by these words.
CREATE OR REPLACE MACRO enum_search_text(area, value) AS
    CASE WHEN area = 'Phase' THEN phase_label(value)
         WHEN value = 'NA' THEN 'N/A'
         WHEN area = 'DesignMasking' AND value = 'NONE' THEN 'None (Open Label)'
         WHEN area = 'DesignPrimaryPurpose' AND value = 'ECT' THEN 'Educational/Counseling/Training'
         WHEN area = 'DesignInterventionModel' THEN intervention_type_label(value) || ' Assignment'
         ELSE intervention_type_label(value) END;

-- age_days(s): an eligibility age ('18 Years', '6 Months', '2 Weeks', '3 Days', '12 Hours') in whole days.
CREATE OR REPLACE MACRO age_days(s) AS
    CASE
        WHEN s IS NULL OR NOT regexp_matches(s, '^\s*[0-9.]+\s+[A-Za-z]+\s*$') THEN NULL
        ELSE floor(regexp_extract(s, '[0-9.]+')::DOUBLE * CASE
                 WHEN regexp_matches(lower(s), 'year') THEN 365.25
                 WHEN regexp_matches(lower(s), 'month') THEN 30.4375
                 WHEN regexp_matches(lower(s), 'week') THEN 7
                 WHEN regexp_matches(lower(s), 'day') THEN 1
                 WHEN regexp_matches(lower(s), 'hour') THEN 1.0 / 24
                 WHEN regexp_matches(lower(s), 'minute') THEN 1.0 / 1440
             END)::INTEGER
    END;

-- status_rank(s): how active a trial is, most active first (recruiting preferred).
CREATE OR REPLACE MACRO status_rank(s) AS
    CASE s WHEN 'RECRUITING' THEN 0 WHEN 'ACTIVE_NOT_RECRUITING' THEN 1 WHEN 'ENROLLING_BY_INVITATION' THEN 2
           WHEN 'NOT_YET_RECRUITING' THEN 3 WHEN 'COMPLETED' THEN 4 ELSE 5 END;

-- in_ordinal_order(pairs): the values of a list of {o: ordinal, v: value}, by ordinal. A row's list columns are
-- gathered this way rather than with list(v ORDER BY ordinal): DuckDB's ordered aggregates cost several times as
-- much as sorting each small list afterwards.
CREATE OR REPLACE MACRO in_ordinal_order(pairs) AS list_transform(list_sort(pairs), p -> p.v);

-- is_placebo(name): placebo, sham and vehicle arms are not drugs being tested.
CREATE OR REPLACE MACRO is_placebo(name) AS
    regexp_matches(lower(coalesce(name, '')), '\b(placebo|placebos|sham|vehicle|dummy)\b');

-- generic_intervention_name(norm): a normalised intervention name that names no one drug (placebo, saline,
-- standard of care, a route or a class of treatment): it teaches no link between names (intervention_link).
CREATE OR REPLACE MACRO generic_intervention_name(norm) AS
    is_placebo(norm)
    OR regexp_matches(norm, '^ (normal )?saline( solution)? $|^ (standard|usual|routine|best supportive)( of)? care $'
                            || '|^ (standard|usual) (treatment|therapy|practice) $|^ (chemotherapy|surgery|radiotherapy'
                            || '|radiation( therapy)?|control|observation|no intervention|drug|device|other|soc) $');

-- phase_mask(phases): the phases as bits (EARLY_PHASE1 1, PHASE1 2, PHASE2 4, PHASE3 8, PHASE4 16, NA 32), so
-- "has any of these phases" is one AND of integers rather than a read of every trial's phase list.
CREATE OR REPLACE MACRO phase_mask(phases) AS
    coalesce(list_sum(list_transform(list_distinct(phases), p -> CASE p
        WHEN 'EARLY_PHASE1' THEN 1 WHEN 'PHASE1' THEN 2 WHEN 'PHASE2' THEN 4 WHEN 'PHASE3' THEN 8
        WHEN 'PHASE4' THEN 16 WHEN 'NA' THEN 32 ELSE 0 END)), 0)::INTEGER;

-- phase_filter_list(f): 'PHASE3' or '(PHASE2 OR PHASE3)' as a list of phase enum values.
CREATE OR REPLACE MACRO phase_filter_list(f) AS
    list_filter(regexp_extract_all(upper(coalesce(f, '')), '[A-Z0-9_]+'), p -> p NOT IN ('OR', 'AND'));

-- phase_order(phases): phase_rank refined by the lowest phase, so a Phase 2 trial ranks above a Phase 1/Phase 2
-- one and below a Phase 2/Phase 3 one.
CREATE OR REPLACE MACRO phase_order(phases) AS
    phase_rank(phases) * 10 + coalesce(list_min(list_transform(phases, p -> CASE p
        WHEN 'EARLY_PHASE1' THEN 1 WHEN 'PHASE1' THEN 2 WHEN 'PHASE2' THEN 3
        WHEN 'PHASE3' THEN 4 WHEN 'PHASE4' THEN 5 ELSE 0 END)), 0);

-- known_by(day, as_of): a record's date as a cutoff shows it: NULL when after the cutoff (as_of NULL: kept).
CREATE OR REPLACE MACRO known_by(day, as_of) AS CASE WHEN as_of IS NULL OR day <= as_of THEN day END;

-- submission_day(field, as_of, results_posted, dates): a trial_card row's submission, QC or verification date
-- (`dates`: its submission_dates) named by its v2 piece (StudyFirstSubmitDate, LastUpdateSubmitDate, ...; NULL for
-- another) as a cutoff (as_of; NULL: the current state) shows it: one after the cutoff is left out, and the
-- results' with the results (ctmirror/server/records.py leaves the same out of the record).
CREATE OR REPLACE MACRO submission_day(field, as_of, results_posted, dates) AS
    known_by(CASE field
                 WHEN 'StatusVerifiedDate' THEN dates.status_verified_date
                 WHEN 'StudyFirstSubmitDate' THEN dates.study_first_submit_date
                 WHEN 'StudyFirstSubmitQCDate' THEN dates.study_first_submit_qc_date
                 WHEN 'ResultsFirstSubmitDate' THEN CASE WHEN as_of IS NULL OR results_posted
                                                         THEN dates.results_first_submit_date END
                 WHEN 'ResultsFirstSubmitQCDate' THEN CASE WHEN as_of IS NULL OR results_posted
                                                           THEN dates.results_first_submit_qc_date END
                 WHEN 'DispFirstSubmitDate' THEN dates.disp_first_submit_date
                 WHEN 'DispFirstSubmitQCDate' THEN dates.disp_first_submit_qc_date
                 WHEN 'DispFirstPostDate' THEN dates.disp_first_post_date
                 WHEN 'LastUpdateSubmitDate' THEN dates.last_update_submit_date
                 WHEN 'EstimatedResultsFirstSubmitDate' THEN dates.estimated_results_first_submit_date
                 WHEN 'FirstMCPPostDate' THEN dates.first_mcp_post_date END, as_of);

-- sort_value(field, score, ..., as_of, results_posted, submission_dates): a trial_card row's value of a v2
-- search's sort field (an API name, or 'relevance': its score) as a number, days for dates, as of the cutoff
-- as_of (NULL: now). The server writes `field` in as a literal (one of ours), so the planner keeps the one branch
-- and reads that column alone (sql/serve/matches.sql).
CREATE OR REPLACE MACRO sort_value(field, score, enrollment, start_day, completion_day, study_completion_date,
                                   study_first_post_date, last_update_post_date, results_first_post_date, as_of,
                                   results_posted, submission_dates) AS
    CASE field
        WHEN 'relevance' THEN round(coalesce(score, 0), 4)
        WHEN 'EnrollmentCount' THEN enrollment
        ELSE date_diff('day', DATE '1970-01-01', CASE field
            WHEN 'StartDate' THEN start_day
            WHEN 'PrimaryCompletionDate' THEN completion_day
            WHEN 'CompletionDate' THEN partial_date(study_completion_date)
            WHEN 'StudyFirstPostDate' THEN study_first_post_date
            WHEN 'LastUpdatePostDate' THEN last_update_post_date
            WHEN 'ResultsFirstPostDate' THEN results_first_post_date
            ELSE submission_day(field, as_of, results_posted, submission_dates) END)
    END;
