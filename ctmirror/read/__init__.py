"""The read side: Mirror (a read-only view of one published state), the method registry and its methods, their
answers, arguments and models, and what reads them for people (console, display, report, status). It stands on
ctmirror/core alone; the server and the CLI stand on it."""
