-- Run when a catalog is built: its strings are stored without FSST, DuckDB's symbol-table compression, whose
-- analysis of every string segment was the most expensive part of writing the index and trial tables, for a few
-- percent of bytes and no change to method latencies. Readers need nothing: a file's blocks say how they are stored.
SET disabled_compression_methods = 'fsst,rle';
