"""The core every layer stands on: the warehouse's layout and lock, the raw store, DuckDB sessions, SQL files and
the error tree. It imports nothing from the read side (ctmirror's Mirror and methods), the write side (ingest/)
or the CLI."""
