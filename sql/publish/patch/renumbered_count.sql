-- How many known versions the patch renumbered (patch/renumbered_version.sql).
SELECT count(*) FROM patch.renumbered_version;
