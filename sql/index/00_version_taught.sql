-- taught_from(): each version (version_no) with whether it is current and the first cutoff at which it is shown
-- (shown_from; NULL if never): what a synonym a version teaches counts from (05_*_link.sql).
CREATE OR REPLACE MACRO taught_from() AS TABLE
SELECT v.version_no, v.is_current, min(e.valid_from) AS shown_from
FROM study_version AS v
LEFT JOIN version_epoch AS e USING (version_no)
GROUP BY v.version_no, v.is_current;
