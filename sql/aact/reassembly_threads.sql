-- Threads of the dump's database once its tables are read ($threads: one less than the cores, at least one). The
-- reassembly runs beside the normaliser's DuckDB (sql/session/threads.sql) and Python's validation: on two cores a
-- second reassembly thread only adds contention. 100,224 studies: 112 s of CPU instead of 129, 67-69 s instead of 69.
SET threads = $threads;
