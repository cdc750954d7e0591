-- The arguments of one Python API call to search, bound. The call's queries (calls/search_page.sql,
-- calls/search_count.sql) read the given ones from here; see ctmirror/answers.py: execute_shaped. A temporary
-- table: the catalog stays read-only.
CREATE TEMP TABLE IF NOT EXISTS search_args (
    query VARCHAR,
    condition VARCHAR,
    intervention VARCHAR,
    status VARCHAR[],
    location VARCHAR,
    phase VARCHAR[],
    eligibility_keywords VARCHAR,
    min_age_days INTEGER,
    max_age_days INTEGER,
    sex VARCHAR,
    study_type VARCHAR,
    date_before DATE,
    page_offset BIGINT
);
DELETE FROM search_args;
INSERT INTO search_args VALUES ($query, $condition, $intervention, $status, $location, $phase, $eligibility_keywords,
                                $min_age_days, $max_age_days, $sex, $study_type, $date_before::DATE, $page_offset);
