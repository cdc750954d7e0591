-- No term: no versions (a request without a query shows every study; matches.sql reads $has_query).
SELECT NULL::BIGINT AS version_no, NULL::DOUBLE AS score WHERE false
