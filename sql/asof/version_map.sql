-- as-of version map ($cutoff): for each study first posted on or before the cutoff, the version to show.
-- The newest version last updated on or before the cutoff (as_of_exact); failing that, the oldest version
-- updated after it, from which the study is reconstructed (sql/asof/studies.sql). Replaces current_versions.
CREATE OR REPLACE TEMP TABLE current_versions AS
WITH first_post AS (
    SELECT nct_id, min(study_first_post_date) AS first_posted FROM all_versions GROUP BY nct_id
),
ranked AS (
    SELECT
        v.nct_id, v.content_hash,
        coalesce(v.last_update_post_date <= $cutoff::DATE, false) AS as_of_exact,
        row_number() OVER (
            PARTITION BY v.nct_id
            ORDER BY coalesce(v.last_update_post_date <= $cutoff::DATE, false) DESC,
                     CASE WHEN v.last_update_post_date <= $cutoff::DATE THEN v.last_update_post_date END DESC NULLS LAST,
                     v.last_update_post_date ASC NULLS LAST,
                     v.ingested_at DESC, v.content_hash
        ) AS pick
    FROM all_versions AS v
    JOIN first_post AS f USING (nct_id)
    WHERE f.first_posted <= $cutoff::DATE
)
SELECT nct_id, content_hash, as_of_exact FROM ranked WHERE pick = 1;
