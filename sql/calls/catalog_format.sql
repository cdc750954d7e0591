-- What a catalog was built by (publish/catalog_format.sql). A catalog built before the digests has no such columns,
-- or no such table: the Mirror reads either as another version's.
SELECT tables_digest, macros_digest FROM catalog_format;
