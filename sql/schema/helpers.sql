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
