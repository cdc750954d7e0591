-- Run when a catalog is built: its strings are stored without FSST, DuckDB's symbol-table compression, whose
-- analysis of every string segment was the most expensive part of writing the index and trial tables. Measured at
-- 500,000 studies: publishing took 59 s instead of 63 (112 s of CPU instead of 122), the catalog is 7% bigger
-- (3.9 GB), and method latencies are unchanged. Readers need nothing: a file's blocks say how they are stored.
SET disabled_compression_methods = 'fsst';
