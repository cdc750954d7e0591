-- One page of search_studies (parameters bound); the order is relevance, then nct_id.
SELECT * FROM search_studies_page($query, $condition, $intervention, $status, $location, $phase, $eligibility_keywords,
                                  $min_age_days, $max_age_days, $sex, $study_type, $date_before::DATE, $limit, $offset)
