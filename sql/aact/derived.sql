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

-- aact_without_nulls: a record serialised from structs has a member for every field, NULL where AACT had
-- nothing; the API leaves those out, and so does this. A member is a camelCase name, and a '"' inside a JSON
-- string is always escaped, so the patterns cannot match text. Every object keeps a member (an all-NULL struct
-- is NULL itself): dropping "k":null plus its comma, then a last ,"k":null, leaves valid JSON.
CREATE OR REPLACE MACRO aact_without_nulls(j) AS
    regexp_replace(regexp_replace(j::VARCHAR, '"[A-Za-z][A-Za-z0-9]*":null,', '', 'g'),
                   ',"[A-Za-z][A-Za-z0-9]*":null}', '}', 'g');
