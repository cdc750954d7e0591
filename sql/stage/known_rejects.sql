-- known_rejects: the (reason, md5 of the text) of every record earlier segments quarantined (filled by
-- known_rejects_of.sql), so that loading the same bad record again adds no second quarantine row.
CREATE OR REPLACE TABLE known_rejects (reason VARCHAR, text_md5 VARCHAR);
