-- known_versions: the (nct_id, content_hash) of every version earlier segments hold (filled by known_versions_of.sql).
CREATE OR REPLACE TABLE known_versions (nct_id VARCHAR, content_hash VARCHAR);
