-- status_overview: one row: studies, versions, quarantined records.
SELECT
    (SELECT count(*) FROM studies) AS studies,
    (SELECT count(*) FROM study_versions) AS versions,
    (SELECT count(*) FROM quarantine) AS quarantined
