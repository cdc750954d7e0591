-- catalog_format: the version of what the Python API expects of a catalog (its macros, their arguments, the
-- tables it reads; ctmirror.catalog.CATALOG_FORMAT) this one was built to. A Mirror refuses another, with the
-- way out, rather than fail later on a macro's arguments.
CREATE OR REPLACE TABLE catalog_format AS SELECT $format::INTEGER AS format;
