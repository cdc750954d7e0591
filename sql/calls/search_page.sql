-- One page of search_studies (parameters bound); the order is the macro's: relevance, then nct_id.
SELECT * FROM search_studies($query, $condition, $intervention, $status, $location, $phase, $eligibility_keywords,
                             $min_age_days, $max_age_days, $sex, $study_type, $date_before::DATE)
ORDER BY relevance DESC, nct_id
LIMIT $limit OFFSET $offset
