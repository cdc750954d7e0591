"""The `ctmirror` command: thin commands over the library; errors become one line naming the next step."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from tqdm import tqdm

from ctmirror.errors import CtmirrorError, InvalidArgument
from ctmirror.warehouse import Warehouse

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="ctmirror: an offline mirror of ClinicalTrials.gov with SQL analytics.",
    pretty_exceptions_enable=False,
)


class Options:
    warehouse: Path | None = None
    quiet: bool = False
    debug: bool = False


options = Options()


@app.callback()
def main_options(
    warehouse: Annotated[Optional[Path], typer.Option(
        "--warehouse", "-w", envvar="CTMIRROR_WAREHOUSE",
        help="Warehouse folder (default ./warehouse, or $CTMIRROR_WAREHOUSE).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars or log lines.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    options.warehouse = warehouse
    options.quiet = quiet
    options.debug = debug


def open_warehouse() -> Warehouse:
    return Warehouse(options.warehouse)


def progress(total: int | None, unit: str, desc: str) -> tqdm:
    """A bar on a terminal; silent with --quiet or when stderr is not a terminal."""
    return tqdm(total=total, unit=unit, desc=desc, disable=options.quiet or not sys.stderr.isatty(),
                dynamic_ncols=True, leave=False)


def say(message: str) -> None:
    if not options.quiet:
        typer.echo(message, err=True)


@app.command()
def load(
    paths: Annotated[Optional[list[Path]], typer.Argument(
        help="NDJSON files, page responses, single-study JSON, folders or .zip of them; .gz/.zst too.")] = None,
    sample: Annotated[bool, typer.Option("--sample", help="Load the embedded sample of real records.")] = False,
) -> None:
    """Load study records into the warehouse, keeping every version.

    Example: ctmirror load --sample        or   ctmirror load studies.ndjson.zst pages/
    """
    from ingest.loader import load_paths, sample_path, summary_line

    if not paths and not sample:
        raise InvalidArgument("nothing to load: give one or more PATHs, or --sample")
    inputs = list(paths or [])
    if sample:
        inputs.insert(0, sample_path())
    with progress(None, "records", "loading") as bar:
        result = load_paths(open_warehouse(), inputs, source="sample" if sample and not paths else "file",
                            on_record=bar.update)
    typer.echo(summary_line(result))
    for problem in result.counts.problems[:10]:
        say(f"  quarantined: {problem}")
    if result.counts.quarantined > 10:
        say(f"  ... and {result.counts.quarantined - 10} more: SELECT * FROM quarantine")


@app.command()
def rebuild() -> None:
    """Regenerate every table from raw/ without network; the result equals the original loads.

    Example: ctmirror rebuild
    """
    from ingest.loader import rebuild as rebuild_warehouse
    from ingest.loader import summary_line

    with progress(None, "records", "rebuilding") as bar:
        result = rebuild_warehouse(open_warehouse(), on_record=bar.update)
    typer.echo(summary_line(result))


@app.command()
def status(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Studies, versions, per-status and per-phase counts, last run, quarantine, size.

    Example: ctmirror status
    """
    from ctmirror.mirror import Mirror
    from ctmirror.status import warehouse_status

    with Mirror(options.warehouse) as mirror:
        report = warehouse_status(mirror)
    if as_json:
        typer.echo(json.dumps(report, indent=2, default=str))
        return
    typer.echo(f"warehouse    {report['warehouse']} (state {report['state']}, published {report['published_at']})")
    typer.echo(f"studies      {report['studies']:,}   versions {report['versions']:,}   "
               f"quarantined {report['quarantined']:,}   size {report['size_bytes'] / 1e6:,.1f} MB")
    run = report["last_run"]
    if run:
        typer.echo(f"last run     {run['command']} from {run['source']} at {run['finished_at']}"
                   f" (data timestamp {run['data_timestamp'] or 'unknown'})")
    typer.echo("by status    " + ", ".join(f"{r['overall_status']} {r['studies']:,}" for r in report["by_status"]))
    typer.echo("by phase     " + ", ".join(f"{r['phase']} {r['studies']:,}" for r in report["by_phase"]))


def main() -> None:
    try:
        app(standalone_mode=False)
    except CtmirrorError as exc:
        if options.debug:
            raise
        typer.echo(f"error: {exc}", err=True)
        if exc.hint:
            typer.echo(f"hint: {exc.hint}", err=True)
        sys.exit(2)
    except (typer.Exit, SystemExit) as exc:
        code = getattr(exc, "exit_code", getattr(exc, "code", 0))
        sys.exit(code)
    except Exception as exc:
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):  # a usage error from the CLI parser
            exc.show()
            sys.exit(exc.exit_code)
        if type(exc).__name__ == "Abort":
            sys.exit(130)
        if options.debug:
            raise
        typer.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        typer.echo("hint: run again with --debug for the traceback", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
