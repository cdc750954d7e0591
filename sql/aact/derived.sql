-- Fields AACT computes (a Ruby proc in CTTI's mapping), turned back into their v2 form.

-- aact_phases: AACT joins a study's phases with '/' ("PHASE1/PHASE2"); older dumps spell them for display
-- ("Phase 1/Phase 2", "Early Phase 1", "N/A"), so both read back as the v2 enumeration.
CREATE OR REPLACE MACRO aact_phases(phase) AS
    CASE
        WHEN phase IS NULL OR trim(phase) = '' THEN NULL
        WHEN upper(trim(phase)) IN ('N/A', 'NA') THEN ['NA']
        ELSE list_transform(string_split(phase, '/'),
                            p -> regexp_replace(upper(trim(p)), '[^A-Z0-9]+', '', 'g')
                                 .replace('EARLYPHASE', 'EARLY_PHASE'))
    END;

-- aact_std_ages: eligibilities' child / adult / older_adult flags as v2's stdAges, in v2's order.
CREATE OR REPLACE MACRO aact_std_ages(child, adult, older_adult) AS
    nullif(list_concat(CASE WHEN child THEN ['CHILD'] ELSE [] END,
                       CASE WHEN adult THEN ['ADULT'] ELSE [] END,
                       CASE WHEN older_adult THEN ['OLDER_ADULT'] ELSE [] END), []);

-- aact_who_masked: designs' subject / caregiver / investigator / outcomes assessor flags as v2's whoMasked, in
-- v2's order.
CREATE OR REPLACE MACRO aact_who_masked(subject, caregiver, investigator, assessor) AS
    nullif(list_concat(CASE WHEN subject THEN ['PARTICIPANT'] ELSE [] END,
                       CASE WHEN caregiver THEN ['CARE_PROVIDER'] ELSE [] END,
                       CASE WHEN investigator THEN ['INVESTIGATOR'] ELSE [] END,
                       CASE WHEN assessor THEN ['OUTCOMES_ASSESSOR'] ELSE [] END), []);

-- aact_enum: an enumeration value as v2 spells it. Dumps since AACT moved to the v2 API hold v2's codes
-- ("ACTIVE_NOT_RECRUITING"), which pass unchanged; older monthly archives, the past states a backtest wants, spell
-- them for display ("Active, not recruiting", "Dietary Supplement", "Anticipated"), and become the same codes.
CREATE OR REPLACE MACRO aact_enum_code(e) AS
    CASE e WHEN 'ANTICIPATED' THEN 'ESTIMATED' WHEN 'UNKNOWN_STATUS' THEN 'UNKNOWN' WHEN 'U_S_FED' THEN 'FED'
           WHEN 'OTHER_U_S_FED' THEN 'OTHER_GOV' WHEN '' THEN NULL ELSE e END;
-- A value already spelled as a code is told apart first: the rewrite (a regexp_replace) costs several times a match,
-- on each of the dump's millions of values.
CREATE OR REPLACE MACRO aact_enum(s) AS
    aact_enum_code(CASE WHEN regexp_full_match(s, '[A-Z0-9]+(_[A-Z0-9]+)*') THEN s
                        ELSE upper(trim(regexp_replace(trim(s), '[^A-Za-z0-9]+', '_', 'g'), '_')) END);

-- aact_date: a date as v2 writes it (2019-06, 2019-06-03); older archives wrote "June 2019" and "June 3, 2019".
-- Anything else is left as it is, for validation to quarantine with the field named.
CREATE OR REPLACE MACRO aact_date(s) AS
    CASE
        WHEN s IS NULL OR regexp_full_match(s, '\d{4}(-\d{2}(-\d{2})?)?') THEN s
        WHEN regexp_full_match(s, '[A-Za-z]+ \d{4}') THEN coalesce(strftime(try_strptime(s, '%B %Y'), '%Y-%m'), s)
        WHEN regexp_full_match(s, '[A-Za-z]+ \d{1,2}, \d{4}') THEN
            coalesce(strftime(try_strptime(s, '%B %d, %Y'), '%Y-%m-%d'), s)
        ELSE s
    END;
