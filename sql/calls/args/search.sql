-- A call's arguments, bound into the one row of search_args (args/search_table.sql).
UPDATE search_args SET query = $query, condition = $condition, intervention = $intervention, status = $status,
    location = $location, phase = $phase, eligibility_keywords = $eligibility_keywords, min_age_days = $min_age_days,
    max_age_days = $max_age_days, sex = $sex, study_type = $study_type, date_before = $date_before::DATE,
    page_offset = $page_offset;
