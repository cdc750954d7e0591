-- How many studies search_studies finds (parameters bound).
SELECT count(*) AS total FROM search_studies($query, $condition, $intervention, $status, $location, $phase,
                                             $eligibility_keywords, $min_age_days, $max_age_days, $sex, $study_type,
                                             $date_before::DATE)
