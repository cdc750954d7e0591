-- Adds the quarantined records of earlier segments ($files: their quarantine files) to known_rejects.
INSERT INTO known_rejects SELECT DISTINCT reason, md5(record_text) FROM read_parquet($files)
