-- study_version: every version of every study the state holds (all_studies: the segments' rows, every version),
-- numbered (version_no, version_number(study_no, ordinal)) in study order, then as the registry updated them: a
-- study's versions keep their numbers while no version is added before them. The index's tables key a version's
-- rows by version_no; is_current marks the version the current state shows (current_version); record_file is the
-- file of study_versions holding its record ($version_files), relative to the warehouse or snapshot folder
-- ($build_root), and record_row its row there, where the server reads it from alone (the segment's record file,
-- ctmirror/core/record_files.py, holds the same rows in the same order).
CREATE TABLE study_version AS
WITH ingested AS (
    SELECT nct_id, content_hash, max(ingested_at) AS ingested_at, min(filename) AS file,
           arg_min(file_row_number, (filename, file_row_number)) AS file_row
    FROM read_parquet($version_files, filename = true, file_row_number = true)
    GROUP BY nct_id, content_hash
)
SELECT version_number(n.study_no, row_number() OVER (PARTITION BY n.study_no
                                                     ORDER BY s.last_update_post_date NULLS LAST, i.ingested_at,
                                                              s.content_hash)) AS version_no,
       n.study_no, s.nct_id, s.content_hash, c.nct_id IS NOT NULL AS is_current, i.ingested_at,
       replace(i.file, $build_root || '/', '') AS record_file, i.file_row::INTEGER AS record_row
FROM all_studies AS s
JOIN study_number AS n USING (nct_id)
LEFT JOIN ingested AS i USING (nct_id, content_hash)
LEFT JOIN current_version AS c USING (nct_id, content_hash)
ORDER BY version_no;
