-- Run on every connection and cursor ctmirror opens: DuckDB draws a progress bar on stdout for any query over two
-- seconds, which would corrupt the CLI's output (JSON included). The setting is per session, so a cursor needs
-- it as much as its connection.
SET enable_progress_bar = false;
