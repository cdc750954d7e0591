-- Studies as the registry stood on $cutoff ($files: the segments' studies files; current_versions from
-- version_map.sql), by the rules of sql/schema/as_of_rules.sql. A version updated on or before the cutoff is shown
-- whole. A study known only from a later version is reconstructed, marked as_of_exact = false: its status (see
-- reconstructed_status), why_stopped only with a stopped status; has_results only if results were first posted on
-- or before the cutoff (for every study). What the registry recorded only after the cutoff is withheld, never
-- relabelled, and named in `withheld`: a date after the cutoff not typed ESTIMATED (ACTUAL or untyped; with
-- its raw text, precision and type), in a reconstruction an ACTUAL enrollment (reached later) and a stop reason;
-- the last-update date (after the cutoff) and later results dates are left out too; a reconstruction's is kept
-- apart as reconstructed_from (the version it was made from); a submission, QC or verification date after the
-- cutoff is left out (results' only with the results).
-- UNKNOWN is derived by the registry later, without a new version, so for every study (exact or not) it is derived
-- again at the cutoff (status_at).
-- This is the reference the version-aware index (sql/index/00_version_epoch.sql) is tested against.
-- The caller appends ORDER BY the table's key.
WITH picked AS (
    SELECT t.*, c.as_of_exact,
           status_at(known_status(t.overall_status, t.last_known_status), c.as_of_exact, t.start_date,
                     coalesce(t.primary_completion_date, t.completion_date, t.last_update_post_date),
                     t.status_verified_date, $cutoff::DATE) AS status_then,
           reconstructed_status(known_status(t.overall_status, t.last_known_status), c.as_of_exact, t.start_date,
                                coalesce(t.primary_completion_date, t.completion_date, t.last_update_post_date),
                                $cutoff::DATE) AS status_before_unknown
    FROM read_parquet($files, union_by_name = true) AS t
    JOIN current_versions AS c ON t.nct_id = c.nct_id AND t.content_hash = c.content_hash
)
SELECT * EXCLUDE (status_before_unknown, status_then, as_of_exact, withholds_enrollment, withholds_start,
                  withholds_primary, withholds_completion) REPLACE (
    CASE WHEN status_then = 'UNKNOWN' THEN coalesce(last_known_status, status_before_unknown) END AS last_known_status,
    status_then AS overall_status,
    CASE WHEN as_of_exact OR is_stopped(status_then) THEN why_stopped END AS why_stopped,
    has_results AND coalesce(results_first_post_date <= $cutoff::DATE, as_of_exact) AS has_results,
    CASE WHEN results_first_post_date <= $cutoff::DATE THEN results_first_post_date_raw END AS results_first_post_date_raw,
    CASE WHEN results_first_post_date <= $cutoff::DATE THEN results_first_post_date_precision END AS results_first_post_date_precision,
    CASE WHEN results_first_post_date <= $cutoff::DATE THEN results_first_post_date END AS results_first_post_date,
    CASE WHEN results_first_post_date <= $cutoff::DATE THEN results_first_post_date_type END AS results_first_post_date_type,
    CASE WHEN NOT withholds_enrollment THEN enrollment END AS enrollment,
    CASE WHEN NOT withholds_enrollment THEN enrollment_type END AS enrollment_type,
    CASE WHEN NOT withholds_start THEN start_date END AS start_date,
    CASE WHEN NOT withholds_start THEN start_date_raw END AS start_date_raw,
    CASE WHEN NOT withholds_start THEN start_date_precision END AS start_date_precision,
    CASE WHEN NOT withholds_start THEN start_date_type END AS start_date_type,
    CASE WHEN NOT withholds_primary THEN primary_completion_date END AS primary_completion_date,
    CASE WHEN NOT withholds_primary THEN primary_completion_date_raw END AS primary_completion_date_raw,
    CASE WHEN NOT withholds_primary THEN primary_completion_date_precision END AS primary_completion_date_precision,
    CASE WHEN NOT withholds_primary THEN primary_completion_date_type END AS primary_completion_date_type,
    CASE WHEN NOT withholds_completion THEN completion_date END AS completion_date,
    CASE WHEN NOT withholds_completion THEN completion_date_raw END AS completion_date_raw,
    CASE WHEN NOT withholds_completion THEN completion_date_precision END AS completion_date_precision,
    CASE WHEN NOT withholds_completion THEN completion_date_type END AS completion_date_type,
    CASE WHEN as_of_exact THEN last_update_post_date_raw END AS last_update_post_date_raw,
    CASE WHEN as_of_exact THEN last_update_post_date_precision END AS last_update_post_date_precision,
    CASE WHEN as_of_exact THEN last_update_post_date END AS last_update_post_date,
    CASE WHEN as_of_exact THEN last_update_post_date_type END AS last_update_post_date_type,
    CASE WHEN status_verified_date <= $cutoff::DATE THEN status_verified_date END AS status_verified_date,
    CASE WHEN study_first_submit_date <= $cutoff::DATE THEN study_first_submit_date END AS study_first_submit_date,
    CASE WHEN study_first_submit_qc_date <= $cutoff::DATE THEN study_first_submit_qc_date END
        AS study_first_submit_qc_date,
    CASE WHEN results_first_post_date <= $cutoff::DATE AND results_first_submit_date <= $cutoff::DATE
         THEN results_first_submit_date END AS results_first_submit_date,
    CASE WHEN results_first_post_date <= $cutoff::DATE AND results_first_submit_qc_date <= $cutoff::DATE
         THEN results_first_submit_qc_date END AS results_first_submit_qc_date,
    CASE WHEN disp_first_submit_date <= $cutoff::DATE THEN disp_first_submit_date END AS disp_first_submit_date,
    CASE WHEN disp_first_submit_qc_date <= $cutoff::DATE THEN disp_first_submit_qc_date END
        AS disp_first_submit_qc_date,
    CASE WHEN disp_first_post_date <= $cutoff::DATE THEN disp_first_post_date END AS disp_first_post_date,
    CASE WHEN last_update_submit_date <= $cutoff::DATE THEN last_update_submit_date END AS last_update_submit_date,
    CASE WHEN estimated_results_first_submit_date <= $cutoff::DATE THEN estimated_results_first_submit_date END
        AS estimated_results_first_submit_date,
    CASE WHEN first_mcp_post_date <= $cutoff::DATE THEN first_mcp_post_date END AS first_mcp_post_date
), NULL::DATE AS removed_from_registry_on, NULL::VARCHAR AS merged_into_nct_id, as_of_exact,
    CASE WHEN NOT as_of_exact THEN last_update_post_date END AS reconstructed_from,
    list_filter([CASE WHEN NOT (as_of_exact OR is_stopped(status_then)) AND why_stopped IS NOT NULL
                      THEN 'why_stopped' END,
                 CASE WHEN withholds_enrollment THEN 'enrollment' END,
                 CASE WHEN withholds_start THEN 'start_date' END,
                 CASE WHEN withholds_primary THEN 'primary_completion_date' END,
                 CASE WHEN withholds_completion THEN 'completion_date' END], w -> w IS NOT NULL) AS withheld
FROM (SELECT *,  -- a date after the cutoff not typed as a plan (ACTUAL, or untyped as in older records)
             coalesce(NOT as_of_exact AND enrollment_type = 'ACTUAL', false) AS withholds_enrollment,
             coalesce(start_date > $cutoff::DATE AND start_date_type IS DISTINCT FROM 'ESTIMATED', false)
                 AS withholds_start,
             coalesce(primary_completion_date > $cutoff::DATE
                      AND primary_completion_date_type IS DISTINCT FROM 'ESTIMATED', false) AS withholds_primary,
             coalesce(completion_date > $cutoff::DATE AND completion_date_type IS DISTINCT FROM 'ESTIMATED', false)
                 AS withholds_completion
      FROM picked)
