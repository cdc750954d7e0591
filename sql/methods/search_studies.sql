-- search_studies_page(query, condition, intervention, status, location, phase, eligibility_keywords, min_age_days,
-- max_age_days, sex, study_type, date_before, page_limit, page_offset): one page of the studies passing all
-- given filters (NULL = no filter), as search candidates, by relevance (sum of the query, condition and
-- intervention scores) then nct_id. Ages: the trial's window admits the patient (minimum <= min_age, maximum
-- >= max_age; a missing bound admits everyone). Sex: a trial for ALL (or not saying) admits both.
-- Every row also carries total_matches, the number of studies the whole search finds.
-- search_studies(... the first twelve ...): every match, unpaged.
CREATE OR REPLACE MACRO search_matches(text_query, condition_query, intervention_query, status_list,
                                       location_query, phase_list, eligibility_query, patient_min_age_days,
                                       patient_max_age_days, sex_wanted, study_type_wanted, cutoff) AS TABLE
WITH
wanted AS (
    SELECT (text_query IS NOT NULL)::INTEGER + (condition_query IS NOT NULL)::INTEGER
           + (intervention_query IS NOT NULL)::INTEGER AS n
),
m AS (
    SELECT nct_id, sum(score) AS relevance
    FROM (SELECT * FROM term_matches(text_query)
          UNION ALL SELECT * FROM field_matches('condition', condition_query)
          UNION ALL SELECT * FROM field_matches('intervention', intervention_query))
    GROUP BY nct_id
    HAVING count(*) = (SELECT n FROM wanted)
    UNION ALL
    SELECT nct_id, 0 FROM trial_card WHERE (SELECT n FROM wanted) = 0
)
SELECT t.nct_id, round(m.relevance, 4) AS relevance
FROM m
JOIN trial_card AS t USING (nct_id)
WHERE in_scope(t.study_first_post_date, cutoff)
  AND (status_list IS NULL OR list_contains(status_list, t.overall_status))
  AND (phase_list IS NULL OR list_has_any(t.phases, phase_list))
  AND (study_type_wanted IS NULL OR t.study_type = study_type_wanted)
  AND (sex_wanted IS NULL OR t.sex IS NULL OR t.sex = 'ALL' OR t.sex = sex_wanted)
  AND (patient_min_age_days IS NULL OR t.minimum_age_days IS NULL OR t.minimum_age_days <= patient_min_age_days)
  AND (patient_max_age_days IS NULL OR t.maximum_age_days IS NULL OR t.maximum_age_days >= patient_max_age_days)
  AND (location_query IS NULL OR t.nct_id IN (SELECT nct_id FROM location_matches(location_query)))
  AND (eligibility_query IS NULL OR t.nct_id IN (
        SELECT nct_id FROM trial_detail
        WHERE contains(search_norm(eligibility_criteria), search_norm(eligibility_query))));

CREATE OR REPLACE MACRO search_studies_page(text_query, condition_query, intervention_query, status_list,
                                            location_query, phase_list, eligibility_query, patient_min_age_days,
                                            patient_max_age_days, sex_wanted, study_type_wanted, cutoff,
                                            page_limit, page_offset) AS TABLE
WITH matches AS (
    SELECT *, count(*) OVER () AS total_matches  -- counted while ranking: the page needs no second pass
    FROM search_matches(text_query, condition_query, intervention_query, status_list, location_query,
                        phase_list, eligibility_query, patient_min_age_days, patient_max_age_days,
                        sex_wanted, study_type_wanted, cutoff)
),
page AS (SELECT * FROM matches ORDER BY relevance DESC, nct_id LIMIT page_limit OFFSET page_offset)
SELECT
    'NCT:' || t.nct_id[4:] AS id,
    t.nct_id,
    coalesce(t.official_title, t.title) AS title,
    t.title AS brief_title,
    t.brief_summary,
    array_to_string(t.phases, '/') AS phase,
    t.phases,
    t.overall_status AS status,
    t.conditions,
    list_transform(t.interventions, i -> i.intervention_name) AS interventions,
    t.sponsor,
    t.enrollment,
    t.start_date,
    t.completion_date AS primary_completion_date,
    t.as_of_exact,
    t.content_hash AS version,
    p.relevance,
    p.total_matches
FROM page AS p
JOIN trial_card AS t USING (nct_id)
ORDER BY p.relevance DESC, t.nct_id;

CREATE OR REPLACE MACRO search_studies(text_query, condition_query, intervention_query, status_list, location_query,
                                       phase_list, eligibility_query, patient_min_age_days, patient_max_age_days,
                                       sex_wanted, study_type_wanted, cutoff) AS TABLE
SELECT * FROM search_studies_page(text_query, condition_query, intervention_query, status_list, location_query,
                                  phase_list, eligibility_query, patient_min_age_days, patient_max_age_days,
                                  sex_wanted, study_type_wanted, cutoff, NULL, 0);
