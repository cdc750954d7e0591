-- The rules of strict "as of" answers, shared by the warehouse's version-aware index (sql/index/00_version_epoch.sql)
-- and the frozen snapshots (sql/asof/studies.sql), so both answer alike.

-- known_status(overall_status, last_known_status): a version's status as last known: UNKNOWN is the registry's
-- later verdict, so it reads as the status it last knew, and is derived again at each cutoff (status_at).
CREATE OR REPLACE MACRO known_status(overall_status, last_known_status) AS
    CASE WHEN overall_status = 'UNKNOWN' AND last_known_status IS NOT NULL THEN last_known_status
         ELSE overall_status END;

-- reconstructed_status(known, exact, start_day, event_day, cutoff): the status on the cutoff of a version shown
-- exactly (exact: last updated on or before it), or reconstructed from a version updated after it: NOT_YET_RECRUITING
-- while the start date is after the cutoff; a terminal status whose event date (primary completion, else
-- completion, else last update) is after the cutoff is not shown: RECRUITING then (NOT_YET_RECRUITING if it was
-- withdrawn: withdrawn studies enrolled no one).
CREATE OR REPLACE MACRO reconstructed_status(known, exact, start_day, event_day, cutoff) AS
    CASE
        WHEN exact THEN known
        WHEN known IN ('COMPLETED', 'TERMINATED', 'WITHDRAWN', 'SUSPENDED') AND event_day <= cutoff::DATE THEN known
        WHEN start_day IS NULL OR start_day > cutoff::DATE THEN 'NOT_YET_RECRUITING'
        WHEN known = 'WITHDRAWN' THEN 'NOT_YET_RECRUITING'
        WHEN known IN ('COMPLETED', 'TERMINATED', 'SUSPENDED') THEN 'RECRUITING'
        ELSE known
    END;

-- unknown_from(verified_on): the first cutoff at which the registry's UNKNOWN rule holds for a status last
-- verified on verified_on: more than two years after it.
CREATE OR REPLACE MACRO unknown_from(verified_on) AS (verified_on + INTERVAL 2 YEAR)::DATE + 1;

-- status_at(known, exact, start_day, event_day, verified_on, cutoff): the status a strict answer shows on the
-- cutoff: reconstructed_status, then UNKNOWN where the registry's rule holds on the cutoff (an active status last
-- verified more than two years before it).
CREATE OR REPLACE MACRO status_at(known, exact, start_day, event_day, verified_on, cutoff) AS
    CASE WHEN reconstructed_status(known, exact, start_day, event_day, cutoff)
                  IN ('RECRUITING', 'NOT_YET_RECRUITING', 'ACTIVE_NOT_RECRUITING', 'ENROLLING_BY_INVITATION')
              AND cutoff::DATE >= unknown_from(verified_on) THEN 'UNKNOWN'
         ELSE reconstructed_status(known, exact, start_day, event_day, cutoff) END;

-- is_stopped(status): a status whose why_stopped a strict answer shows even when the version is reconstructed.
CREATE OR REPLACE MACRO is_stopped(status) AS status IN ('TERMINATED', 'WITHDRAWN', 'SUSPENDED');

-- shown_at(valid_from, valid_to, is_current, first_posted, cutoff, as_of, as_of_exact): whether a row of the
-- version-aware index (trial_card, stopped_card) is what a call shows. as_of NULL: the current state's rows
-- (is_current); a date: the row valid on it, strictly (valid_from <= as_of < valid_to). cutoff: date_before's
-- first-posted filter. as_of_exact (the row's, where the caller passes it): where the session's variable
-- ctmirror_exact_only is true (an exact-only reader: ctmirror.read.mirror), a reconstructed row is not shown.
CREATE OR REPLACE MACRO shown_at(valid_from, valid_to, is_current, first_posted, cutoff, as_of,
                                 as_of_exact := NULL) AS
    CASE WHEN as_of IS NULL THEN is_current
         ELSE valid_from <= as_of::DATE AND as_of::DATE < valid_to
              AND (as_of_exact IS NOT false OR NOT coalesce(getvariable('ctmirror_exact_only'), false)) END
    AND (cutoff IS NULL OR first_posted <= cutoff::DATE);

-- The index's keys, each made from what it numbers, so a study's rows keep their keys from one state to the next
-- and keys order as what they number. study_number(nct_id): a study's, the 8 digits of its NCT ID.
-- version_number(study_no, ordinal): a study's versions (ordinal from 1, in
-- the order the registry updated them) after its study_no; version_study(version_no): the study_no again.
-- card_number(version_no, ordinal): trial_card's rows of a version (ordinal from 1, in the order of their spans)
-- after its version_no. A study of a million versions, or a version of more spans than the rules can cut, is an
-- error rather than another study's key.
CREATE OR REPLACE MACRO study_number(nct_id) AS substr(nct_id, 4)::INTEGER;
CREATE OR REPLACE MACRO version_number(study_no, ordinal) AS
    CASE WHEN ordinal BETWEEN 1 AND 1048575 THEN study_no::BIGINT * 1048576 + ordinal
         ELSE error('version_number: ' || study_no || ' has more versions than a key holds') END;
CREATE OR REPLACE MACRO version_study(version_no) AS (version_no // 1048576)::INTEGER;
CREATE OR REPLACE MACRO card_number(version_no, ordinal) AS
    CASE WHEN ordinal BETWEEN 1 AND 15 THEN version_no * 16 + ordinal
         ELSE error('card_number: version ' || version_no || ' has more spans than a key holds') END;
-- shown_key(version_no, is_current): trial_card's key of a row: its version_no, plus 2^56 for a row the current
-- state does not show. shown_keys(version_no, as_of): the keys of the rows of a version a call at as_of may show
-- (NULL: the current state's row alone). A method joins its matched versions to trial_card on these keys, one
-- integer: DuckDB hands a join's key range to the scan of trial_card, which stores the current rows first, so for
-- the current state it skips the past rows. Unnested beside the matches rather than joined as a table of their
-- own, they leave the planner no order but matches first (a table of is_current values, in a plan made after the
-- arguments' table had been written often, was joined to trial_card first: 90 ms a call where 20 was right).
CREATE OR REPLACE MACRO shown_key(version_no, is_current) AS
    (version_no + CASE WHEN is_current THEN 0 ELSE 72057594037927936 END)::BIGINT;
CREATE OR REPLACE MACRO shown_keys(version_no, as_of) AS
    CASE WHEN as_of IS NULL THEN [shown_key(version_no, true)]
         ELSE [shown_key(version_no, true), shown_key(version_no, false)] END;
-- The same rules in a plan made for calls that are all on the current state: current_state is then the constant
-- true (no call has a cutoff or an as_of, which current_state_holds checks), so the planner keeps the current row's
-- key alone and drops the test of its dates, whose columns it then does not read. trial_card's is_current is
-- read from its key (shown_key < shown_key(0, false)), which its join reads anyway.
CREATE OR REPLACE MACRO shown_keys_in(version_no, as_of, current_state) AS
    CASE WHEN current_state THEN [shown_key(version_no, true)] ELSE shown_keys(version_no, as_of) END;
CREATE OR REPLACE MACRO shown_in(valid_from, valid_to, is_current, first_posted, cutoff, as_of, current_state,
                                 as_of_exact := NULL) AS
    CASE WHEN current_state THEN is_current
         ELSE shown_at(valid_from, valid_to, is_current, first_posted, cutoff, as_of, as_of_exact := as_of_exact) END;
CREATE OR REPLACE MACRO current_state_holds(current_state, cutoff, as_of) AS
    CASE WHEN current_state AND (cutoff IS NOT NULL OR as_of IS NOT NULL)
         THEN error('current_state := true is for calls without a cutoff or as_of: pass false (the default)')
         ELSE true END;
