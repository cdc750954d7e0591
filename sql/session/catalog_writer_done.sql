-- Run when a catalog is built on a writer's connection: the connection is left as sql/session/catalog_writer.sql
-- found it (strings and integers compressed every way DuckDB can, and its in-memory database the default).
RESET disabled_compression_methods;
RESET force_bitpacking_mode;
USE memory;
