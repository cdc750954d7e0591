-- Frees one batch's parsed records once its segment is committed.
DROP VIEW new_versions;
DROP TABLE new_ordinals;
DROP TABLE parsed;
