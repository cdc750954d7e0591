-- The arguments of one Python API call to search, bound. The call's queries (calls/search_page.sql,
-- calls/search_count.sql) read the given ones from here; see ctmirror/answers.py: execute_shaped. A temporary
-- table: the catalog stays read-only.
-- Created once per connection, with one row; each call sets it (args/search.sql).
CREATE OR REPLACE TEMP TABLE search_args AS
SELECT NULL::VARCHAR AS query,
       NULL::VARCHAR AS condition,
       NULL::VARCHAR AS intervention,
       NULL::VARCHAR[] AS status,
       NULL::VARCHAR AS location,
       NULL::VARCHAR[] AS phase,
       NULL::VARCHAR AS eligibility_keywords,
       NULL::INTEGER AS min_age_days,
       NULL::INTEGER AS max_age_days,
       NULL::VARCHAR AS sex,
       NULL::VARCHAR AS study_type,
       NULL::DATE AS date_before,
       NULL::BIGINT AS page_offset;
