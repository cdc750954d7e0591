-- status_overview: one row: studies, versions, quarantined records, and partial records: studies whose current
-- version has no status module (no status, phase, type or dates), as an API call restricted with `fields` returns
-- them; they count as '(none)' in every statistic of those fields.
SELECT
    (SELECT count(*) FROM studies) AS studies,
    (SELECT count(*) FROM study_versions) AS versions,
    (SELECT count(*) FROM quarantine) AS quarantined,
    (SELECT count(*) FROM studies WHERE overall_status IS NULL AND study_first_post_date IS NULL) AS partial_records
