-- One page of search_studies; the order is relevance, then nct_id. Each parameter is an argument of
-- calls/args/search.sql, and page_limit the page size (see ctmirror/read/answers.py: execute_shaped); each
-- parameter named given_ and an argument's name is whether that argument is given, a constant of the plan; one
-- named relax_ and an argument's name, whether its text may scatter its words (false: the plan has no scattered
-- words for it).
SELECT * FROM search_studies_page($query, $condition, $intervention, $status, $location, $phase, $eligibility_keywords,
                                  $min_age, $max_age, $sex, $study_type, $date_before, $as_of,
                                  $page_limit,
                                  $page_offset,
                                  term_count := $given_query::INTEGER + $given_condition::INTEGER
                                                + $given_intervention::INTEGER,
                                  id_list := $nct_ids, near_versions := $near, sort_order := $sort,
                                  relax_condition := $relax_condition, relax_intervention := $relax_intervention,
                                  relax_query := $relax_query)
