-- Studies as the registry stood on $cutoff ($files: the segments' studies files; $versions: their study_versions
-- files; current_versions from version_map.sql). A version updated on or before the cutoff is shown whole. A
-- study known only from a later version is reconstructed, marked as_of_exact = false:
--   * status: NOT_YET_RECRUITING while the start date is after the cutoff; a terminal status (COMPLETED,
--     TERMINATED, WITHDRAWN, SUSPENDED) whose event date (primary completion, else completion, else last update
--     posted) is after the cutoff is not shown: the study was RECRUITING then (NOT_YET_RECRUITING if it was
--     withdrawn: withdrawn studies enrolled no one), and its why_stopped is not shown either;
--   * has_results only if results were first posted on or before the cutoff (for every study);
--   * an ACTUAL enrollment becomes ESTIMATED; any date after the cutoff typed ACTUAL becomes ESTIMATED; the
--     last-update date (after the cutoff) and later results dates are withheld.
-- UNKNOWN is derived by the registry later, without a new version, so for every study (exact or not) it is
-- derived again at the cutoff: a stored UNKNOWN reads as its last known status, and a status is UNKNOWN only
-- where the registry's rule holds on the cutoff: the status is one of the active ones (RECRUITING,
-- NOT_YET_RECRUITING, ACTIVE_NOT_RECRUITING, ENROLLING_BY_INVITATION) and was last verified
-- (statusModule.statusVerifiedDate) more than two years before the cutoff.
-- The caller appends ORDER BY the table's key.
WITH verified AS (
    SELECT v.nct_id, v.content_hash,
           partial_date(json_extract_string(v.raw, '$.protocolSection.statusModule.statusVerifiedDate')) AS verified_on
    FROM read_parquet($versions, union_by_name = true) AS v
    SEMI JOIN current_versions AS c ON v.nct_id = c.nct_id AND v.content_hash = c.content_hash
),
picked AS (
    SELECT t.*, c.as_of_exact, f.verified_on,
           CASE WHEN t.overall_status = 'UNKNOWN' AND t.last_known_status IS NOT NULL
                THEN t.last_known_status ELSE t.overall_status END AS known_status,
           coalesce(t.primary_completion_date, t.completion_date, t.last_update_post_date) AS event_date
    FROM read_parquet($files, union_by_name = true) AS t
    JOIN current_versions AS c ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
    LEFT JOIN verified AS f ON t.nct_id = f.nct_id AND t.content_hash = f.content_hash
),
reconstructed AS (
    SELECT *,
           CASE
               WHEN as_of_exact THEN known_status
               WHEN known_status IN ('COMPLETED', 'TERMINATED', 'WITHDRAWN', 'SUSPENDED')
                    AND event_date <= $cutoff::DATE THEN known_status
               WHEN start_date IS NULL OR start_date > $cutoff::DATE THEN 'NOT_YET_RECRUITING'
               WHEN known_status = 'WITHDRAWN' THEN 'NOT_YET_RECRUITING'
               WHEN known_status IN ('COMPLETED', 'TERMINATED', 'SUSPENDED') THEN 'RECRUITING'
               ELSE known_status
           END AS status_before_unknown
    FROM picked
),
ruled AS (
    SELECT *,
           CASE WHEN status_before_unknown IN ('RECRUITING', 'NOT_YET_RECRUITING', 'ACTIVE_NOT_RECRUITING',
                                               'ENROLLING_BY_INVITATION')
                     AND verified_on < $cutoff::DATE - INTERVAL 2 YEAR THEN 'UNKNOWN'
                ELSE status_before_unknown END AS status_then
    FROM reconstructed
)
SELECT * EXCLUDE (known_status, event_date, status_before_unknown, status_then, as_of_exact, verified_on) REPLACE (
    CASE WHEN status_then = 'UNKNOWN' THEN coalesce(last_known_status, status_before_unknown) END AS last_known_status,
    status_then AS overall_status,
    CASE WHEN as_of_exact OR status_then IN ('TERMINATED', 'WITHDRAWN', 'SUSPENDED') THEN why_stopped END AS why_stopped,
    has_results AND coalesce(results_first_post_date <= $cutoff::DATE, as_of_exact) AS has_results,
    CASE WHEN results_first_post_date <= $cutoff::DATE THEN results_first_post_date_raw END AS results_first_post_date_raw,
    CASE WHEN results_first_post_date <= $cutoff::DATE THEN results_first_post_date_precision END AS results_first_post_date_precision,
    CASE WHEN results_first_post_date <= $cutoff::DATE THEN results_first_post_date END AS results_first_post_date,
    CASE WHEN results_first_post_date <= $cutoff::DATE THEN results_first_post_date_type END AS results_first_post_date_type,
    CASE WHEN NOT as_of_exact AND enrollment_type = 'ACTUAL' THEN 'ESTIMATED' ELSE enrollment_type END AS enrollment_type,
    CASE WHEN start_date > $cutoff::DATE AND start_date_type = 'ACTUAL' THEN 'ESTIMATED' ELSE start_date_type END AS start_date_type,
    CASE WHEN primary_completion_date > $cutoff::DATE AND primary_completion_date_type = 'ACTUAL' THEN 'ESTIMATED'
         ELSE primary_completion_date_type END AS primary_completion_date_type,
    CASE WHEN completion_date > $cutoff::DATE AND completion_date_type = 'ACTUAL' THEN 'ESTIMATED'
         ELSE completion_date_type END AS completion_date_type,
    CASE WHEN as_of_exact THEN last_update_post_date_raw END AS last_update_post_date_raw,
    CASE WHEN as_of_exact THEN last_update_post_date_precision END AS last_update_post_date_precision,
    CASE WHEN as_of_exact THEN last_update_post_date END AS last_update_post_date,
    CASE WHEN as_of_exact THEN last_update_post_date_type END AS last_update_post_date_type
), NULL::DATE AS removed_from_registry_on, NULL::VARCHAR AS merged_into_nct_id, as_of_exact
FROM ruled
