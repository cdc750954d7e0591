-- newest_update: the registry's newest last-update-posted date among current studies ($studies).
SELECT max(last_update_post_date) FROM read_parquet($studies)
