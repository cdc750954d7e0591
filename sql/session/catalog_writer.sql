-- Run when a catalog is built: its strings are stored without FSST, DuckDB's symbol-table compression, whose
-- analysis of every string segment was the most expensive part of writing the index and trial tables, for a few
-- percent of bytes and no change to method latencies. Its integers are neither run-length encoded nor bit-packed
-- as deltas, only as offsets from a frame (DuckDB's `for` bitpacking mode, a setting it calls a debugging one):
-- the index's keys, made from NCT numbers, are sparse, and a row fetched through an index from a run-length or
-- delta-packed segment is found by decoding what comes before it in its group (`search`'s lookups of trial_card
-- took 2-5 ms more a call, bench/README.md). Readers need nothing: a file's blocks say how they are stored.
SET disabled_compression_methods = 'fsst,rle';
SET force_bitpacking_mode = 'for';
