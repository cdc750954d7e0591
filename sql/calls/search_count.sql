-- How many studies the search finds. Each parameter is an argument of calls/args/search.sql (see
-- ctmirror/read/answers.py: execute_shaped; search_page.sql says what the given_ parameters are).
SELECT count(*) AS total FROM search_matches($query, $condition, $intervention, $status, $location, $phase,
                                             $eligibility_keywords, $min_age, $max_age, $sex, $study_type,
                                             $date_before, $as_of,
                                             term_count := $given_query::INTEGER + $given_condition::INTEGER
                                                           + $given_intervention::INTEGER,
                                             id_list := $nct_ids, near_versions := $near, sort_order := $sort,
                                             relax_condition := $relax_condition,
                                             relax_intervention := $relax_intervention,
                                             relax_query := $relax_query)
