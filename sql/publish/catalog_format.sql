-- catalog_format: what a catalog was built by, as its readers check it (ctmirror.core.sqlfiles.catalog_digests): the
-- digests of the SQL its tables and views come from and of its macros. A reader refuses a catalog whose tables'
-- digest is not its own (with the way out: `ctmirror republish`), and reads one whose macros' alone differ with its
-- own macros. format 9: what readers from before the digests compare, so that they refuse this catalog.
CREATE OR REPLACE TABLE catalog_format AS
SELECT 9 AS format, $tables_digest::VARCHAR AS tables_digest, $macros_digest::VARCHAR AS macros_digest;
