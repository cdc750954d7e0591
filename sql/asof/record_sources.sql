-- Where the record of each row of a snapshot's study_versions ($snapshot_file), in its order, is: the segment's
-- study_versions file ($files) and row, the same row of that segment's record file.
SELECT s.filename, s.file_row_number
FROM read_parquet($snapshot_file, file_row_number = true) AS o
JOIN read_parquet($files, filename = true, file_row_number = true) AS s USING (nct_id, content_hash)
ORDER BY o.file_row_number
