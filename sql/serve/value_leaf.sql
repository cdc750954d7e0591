-- The versions shown at $as_of (NULL: the current state) whose structured field $field (an Essie AREA name: one of
-- those listed in ctmirror/server/v2/areas.py's STRUCTURED_AREAS) passes the test $test: 'equals' ($value, compared
-- upper-cased with spaces as underscores, as the API's enumerations are written), 'missing', or 'range' (bounds
-- $low_number/$high_number for numbers and ages in days, $low_day/$high_day for dates; NULL: open).
WITH shown AS (
    SELECT version_no,
           CASE $field WHEN 'OverallStatus' THEN [nullif(overall_status, '')] WHEN 'Phase' THEN phases
                       WHEN 'StudyType' THEN [study_type] WHEN 'Sex' THEN [sex] WHEN 'StdAge' THEN std_ages
                       WHEN 'LeadSponsorClass' THEN [sponsor_class] WHEN 'EnrollmentType' THEN [enrollment_type]
                       WHEN 'HasResults' THEN [CASE WHEN results_posted THEN 'TRUE' ELSE 'FALSE' END] END AS texts,
           CASE $field WHEN 'MinimumAge' THEN minimum_age_days WHEN 'MaximumAge' THEN maximum_age_days
                       WHEN 'EnrollmentCount' THEN enrollment END AS number,
           CASE $field WHEN 'StartDate' THEN start_day WHEN 'PrimaryCompletionDate' THEN completion_day
                       WHEN 'CompletionDate' THEN partial_date(study_completion_date)
                       WHEN 'StudyFirstPostDate' THEN study_first_post_date
                       WHEN 'LastUpdatePostDate' THEN last_update_post_date
                       WHEN 'ResultsFirstPostDate' THEN results_first_post_date
                       ELSE submission_day($field, $as_of::DATE, results_posted, submission_dates) END AS day
    FROM trial_card
    WHERE shown_at(valid_from, valid_to, is_current, study_first_post_date, NULL, $as_of::DATE,
                   as_of_exact := as_of_exact)
)
SELECT version_no, 0.0 AS score
FROM shown
WHERE CASE $test
    WHEN 'equals' THEN list_contains(list_transform(texts, t -> upper(replace(t, ' ', '_'))), $value::VARCHAR)
    WHEN 'missing' THEN coalesce(len(list_filter(texts, t -> t IS NOT NULL AND t <> '')), 0) = 0
                        AND number IS NULL AND day IS NULL
    ELSE (number IS NOT NULL AND ($low_number::BIGINT IS NULL OR number >= $low_number::BIGINT)
                             AND ($high_number::BIGINT IS NULL OR number <= $high_number::BIGINT))
         OR (day IS NOT NULL AND ($low_day::DATE IS NULL OR day >= $low_day::DATE)
                             AND ($high_day::DATE IS NULL OR day <= $high_day::DATE))
END
