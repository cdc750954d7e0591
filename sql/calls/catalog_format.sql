-- The format a catalog was built to (publish/catalog_format.sql). A catalog built before formats has no such
-- table: the Mirror reads that as format 0.
SELECT format FROM catalog_format;
