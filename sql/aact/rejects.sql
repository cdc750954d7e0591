-- The rows the table reads refused (each read_csv with store_rejects adds to reject_errors), with their file.
-- byte_position points into the refused row (at the faulty field): the loader turns it into that line's number.
SELECT s.file_path AS path, e.byte_position, e.column_name, e.error_type::VARCHAR AS error_type, e.csv_line,
       e.error_message
FROM reject_errors AS e
JOIN reject_scans AS s USING (scan_id, file_id)
ORDER BY s.file_path, e.byte_position, e.column_name;
