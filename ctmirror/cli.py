"""The `ctmirror` command: thin commands over the library; errors become one line naming the next step."""

from __future__ import annotations

import inspect
import json
import os
import sys
import time
from datetime import date
from pathlib import Path
from typing import Annotated, Optional

import typer
from tqdm import tqdm

from ctmirror.core.duck import CORES, MEMORY_LIMIT_ENV, parse_budget
from ctmirror.core.errors import CtmirrorError, InvalidArgument, NotFound
from ctmirror.core.warehouse import Warehouse
from ctmirror.read.display import left_out_note
from ctmirror.read.registry import METHODS

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
    json: bool = False  # a command's --json: every outcome, errors included, is JSON on stdout


options = Options()


def _print_version(value: bool) -> None:
    if value:
        from ctmirror import __version__

        typer.echo(f"ctmirror {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="Print ctmirror's version and exit.")] = False,
    warehouse: Annotated[Optional[Path], typer.Option(
        "--warehouse", "-w", envvar="CTMIRROR_WAREHOUSE",
        help="Warehouse folder (default ./warehouse, or $CTMIRROR_WAREHOUSE).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars or log lines.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
    memory_limit: Annotated[Optional[str], typer.Option(
        "--memory-limit", envvar=MEMORY_LIMIT_ENV,
        help="Memory budget of a command that writes (2GB, 300MB): what does not fit spills to disk inside the "
             "warehouse. Default: a quarter of the machine's memory, at most 4GB; 'none': DuckDB's own limit "
             "(80% of the machine's memory).")] = None,
) -> None:
    options.warehouse = warehouse
    options.quiet = quiet
    options.debug = debug
    if memory_limit is not None:
        try:
            parse_budget(memory_limit)
        except ValueError as exc:
            raise InvalidArgument(f"--memory-limit: {exc}, or none for no budget",
                                  invalid_input=memory_limit) from None
        os.environ[MEMORY_LIMIT_ENV] = memory_limit  # read by every writer's DuckDB (ctmirror/core/duck.py)


def open_warehouse() -> Warehouse:
    return Warehouse(options.warehouse)


def refuse_inside_warehouse(out: Path) -> None:
    """An output file never lands inside a warehouse: it would change what readers see."""
    from ctmirror.core.warehouse import warehouse_containing

    inside = warehouse_containing(out)
    if inside is not None:
        raise InvalidArgument(f"--out {out} is inside the warehouse {inside}; ctmirror writes no output there",
                              invalid_input=str(out), recovery_hint="write the output somewhere outside the warehouse")


# Off a terminal, a long command logs its progress this often (CTMIRROR_PROGRESS_SECONDS sets it).
LOG_EVERY_SECONDS = float(os.environ.get("CTMIRROR_PROGRESS_SECONDS") or 10)


class Progress:
    """A long command's progress: a bar on a terminal; off one (cron, a log), a line every LOG_EVERY_SECONDS
    with what is done of the total, the rate and the time left; nothing with --quiet."""

    def __init__(self, total: int | None, unit: str, desc: str) -> None:
        self.total, self.unit, self.desc = total, unit, desc
        self.done = 0
        self.started = self.logged = time.monotonic()
        self.bar = None if options.quiet or not sys.stderr.isatty() else \
            tqdm(total=total, unit=unit, desc=desc, dynamic_ncols=True, leave=False)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set_total(self, total: int | None) -> None:
        self.total = total
        if self.bar is not None:
            self.bar.total = total
            self.bar.refresh()

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif not options.quiet and time.monotonic() - self.logged >= LOG_EVERY_SECONDS:
            self.logged = time.monotonic()
            say(self.line())

    def line(self) -> str:
        rate = self.done / max(time.monotonic() - self.started, 1e-9)
        of_total = f" of {self.total:,}" if self.total else ""
        left = f", about {(self.total - self.done) / rate / 60:,.1f} min left" \
            if self.total and rate and self.done < self.total else ""
        return f"{self.desc}: {self.done:,}{of_total} {self.unit}, {rate:,.0f}/s{left}"

    def write(self, message: str) -> None:
        if self.bar is not None:
            self.bar.write(message, file=sys.stderr)
        else:
            say(message)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif not options.quiet and self.done and time.monotonic() - self.started >= LOG_EVERY_SECONDS:
            say(self.line())  # where it ended, for a log that saw it start


def progress(total: int | None, unit: str, desc: str) -> Progress:
    return Progress(total, unit, desc)


def say(message: str) -> None:
    if not options.quiet:
        typer.echo(message, err=True)


def phase(message: str) -> None:
    """A step of publishing as it starts, on stderr above any progress bar; silent with --quiet."""
    if not options.quiet:
        tqdm.write(message, file=sys.stderr)


@app.command()
def load(
    paths: Annotated[Optional[list[Path]], typer.Argument(
        help="NDJSON files, page responses, single-study JSON, folders or .zip of them; .gz/.zst too.")] = None,
    sample: Annotated[bool, typer.Option("--sample", help="Load the embedded sample of real records.")] = False,
) -> None:
    """Load study records into the warehouse, keeping every version.

    Example: ctmirror load --sample        or   ctmirror load studies.ndjson.zst pages/
    """
    from ingest.loader import NothingLoaded, load_paths, sample_path, summary_line

    if not paths and not sample:
        raise InvalidArgument("nothing to load: give one or more PATHs, or --sample")
    inputs = list(paths or [])
    if sample:
        inputs.insert(0, sample_path())
    with progress(None, "records", "loading") as bar:
        try:
            result = load_paths(open_warehouse(), inputs, source="sample" if sample and not paths else "file",
                                on_record=bar.update, on_phase=phase)
        except NothingLoaded as nothing:
            warn_quarantined(nothing.counts)
            raise
    typer.echo(summary_line(result))
    warn_quarantined(result.counts)


def warn_quarantined(counts) -> None:
    """Quarantined records are a warning, shown even with --quiet."""
    for problem in counts.problems[:10]:
        typer.echo(f"  quarantined: {problem}", err=True)
    if counts.quarantined > 10:
        typer.echo(f"  ... and {counts.quarantined - 10} more: SELECT * FROM quarantine", err=True)


@app.command("load-aact")
def load_aact(
    path: Annotated[Path, typer.Argument(help="An AACT flat-file dump: its .zip, or a folder of its .txt files.")],
    dump_date: Annotated[Optional[str], typer.Option(
        "--dump-date", help="The dump's date (YYYY-MM-DD); read from the name when it holds one (20240601_...).")
    ] = None,
) -> None:
    """Load an AACT dump as versions of its studies (source aact), the same as the API's records.

    Example: ctmirror load-aact 20240601_clinical_trials.zip
    """
    from ingest.loader import NothingLoaded, summary_line
    from ingest.loader import load_aact as load_dump

    if dump_date is not None:
        try:
            dump_date = date.fromisoformat(dump_date).isoformat()
        except ValueError:
            raise InvalidArgument(f"--dump-date must be a date (YYYY-MM-DD), got {dump_date!r}") from None
    with progress(None, "studies", "loading AACT") as bar:
        try:
            result = load_dump(open_warehouse(), path, dump_date=dump_date, on_record=bar.update, on_phase=phase)
        except NothingLoaded as nothing:
            warn_quarantined(nothing.counts)
            raise
    typer.echo(summary_line(result))
    warn_quarantined(result.counts)


class SyncProgress(Progress):
    """A sync's progress (ingest.harvest.Progress): studies received, of the registry's total, and notes."""

    def __init__(self, label: str = "sync") -> None:
        super().__init__(None, "studies", label)

    def start(self, total: int | None) -> None:
        self.set_total(total)

    def page(self, studies: int, total: int | None) -> None:
        if total != self.total:
            self.set_total(total)
        self.update(studies)

    def note(self, message: str) -> None:
        self.write(message)


@app.command()
def sync(
    base_url: Annotated[str, typer.Option("--base-url", envvar="CTMIRROR_BASE_URL",
                                          help="API host (default https://clinicaltrials.gov).")] = "https://clinicaltrials.gov",
    full: Annotated[bool, typer.Option("--full", help="Harvest everything, not only what changed.")] = False,
    from_bulk: Annotated[Optional[str], typer.Option("--from-bulk",
                                                     help="Bootstrap from the bulk json.zip (path or URL).")] = None,
    interval: Annotated[float, typer.Option("--interval", help="Minimum seconds between requests.")] = 1.2,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before a request times out.")] = 60.0,
    check_removed: Annotated[bool, typer.Option("--check-removed",
                                                help="Incremental runs too: re-check every known ID.")] = False,
) -> None:
    """Harvest the registry: the first run (or --full) takes everything, later runs only what changed since.
    Resumes where a killed run stopped; readers see the old state until the new one is published whole.

    Example: ctmirror sync            or   ctmirror sync --from-bulk ctg-studies.json.zip
    """
    from ingest.harvest import SyncOptions, sync_from_bulk
    from ingest.harvest import sync as run_sync

    progress = SyncProgress()
    try:
        if from_bulk:
            result = sync_from_bulk(open_warehouse(), from_bulk, progress=progress)
        else:
            result = run_sync(open_warehouse(), SyncOptions(base_url=base_url, min_interval=interval, timeout=timeout,
                                                            full=full, check_removed=check_removed), progress)
    finally:
        progress.close()
    typer.echo(result.summary)


@app.command()
def rebuild() -> None:
    """Regenerate every table from raw/ without network; the result equals the original loads.

    Example: ctmirror rebuild
    """
    from ingest.loader import rebuild as rebuild_warehouse
    from ingest.loader import summary_line

    warehouse = open_warehouse()
    # the records raw/ holds, as the segments being replaced counted them: the bar's total and ETA
    total = warehouse.counts_since(0)["records"] or None
    with progress(total, "records", "rebuilding") as bar:
        result = rebuild_warehouse(warehouse, on_record=bar.update, on_phase=phase)
    typer.echo(summary_line(result))


@app.command()
def republish() -> None:
    """Publish the current state's data again with this version of ctmirror (after an upgrade, when a Mirror
    says the state was published by another version). Nothing is reloaded.

    Example: ctmirror republish
    """
    from ingest.loader import republish as republish_state

    state = republish_state(open_warehouse(), on_phase=phase)
    typer.echo(f"published state {state.state_id}: {state.meta['counts']['studies']:,} studies")


@app.command()
def status(as_json: JsonOption = False, check: Annotated[bool, typer.Option(
        "--check", help="Exit 1 if the newest run failed (for a monitor); 0 otherwise.")] = False,
        as_of: Annotated[Optional[str], typer.Option(
            "--as-of", help="Also: how many of the studies shown on this day are exact (their version of that "
                            "day held), not reconstructed.")] = None) -> None:
    """Studies, versions, per-status and per-phase counts, last run (and last failure), quarantine, size.

    Example: ctmirror status --json   (monitors: last_success, last_failure, last_run_failed, data_age_hours)
    """
    from ctmirror.core.errors import WarehouseError
    from ctmirror.read import arguments
    from ctmirror.read.mirror import Mirror
    from ctmirror.read.status import run_report, warehouse_status

    try:
        with Mirror(options.warehouse) as mirror:
            report = warehouse_status(mirror, arguments.cutoff(as_of) if as_of else None)
    except WarehouseError as exc:  # nothing published (yet): a monitor still learns why the runs failed
        runs = run_report(Warehouse(options.warehouse).recorded_runs())
        if runs["last_failure"] is None:
            raise
        failure = runs["last_failure"]
        if as_json:  # one document: the error's envelope and the runs
            typer.echo(json.dumps({**exc.envelope(), "state": None, **runs}, indent=2, default=str))
        else:
            typer.echo(f"LAST FAILED  {failure['command']} from {failure['source']} at {failure['finished_at']}: "
                       f"{failure['note']}")
        typer.echo(f"error: {exc}\nhint: {exc.recovery_hint}", err=True)
        raise typer.Exit(exc.exit_code) from None
    if as_json:
        typer.echo(json.dumps(report, indent=2, default=str))
    else:
        _print_status(report)
    if check and report["last_run_failed"]:
        raise typer.Exit(1)


def _print_status(report: dict) -> None:
    typer.echo(f"warehouse    {report['warehouse']} (state {report['state']}, published {report['published_at']})")
    if report["snapshot"]:
        snap = report["snapshot"]
        typer.echo(f"snapshot     {snap['mode']} as of {snap['cutoff']}, of state {snap['source_state']} (published "
                   f"{snap['source_published_at']}); {snap['exact_studies']:,} of {snap['studies']:,} studies exact")
    typer.echo(f"studies      {report['studies']:,}   versions {report['versions']:,}   "
               f"quarantined {report['quarantined']:,}   size {report['size_bytes'] / 1e6:,.1f} MB this state, "
               f"{report['size_all_bytes'] / 1e6:,.1f} MB the whole warehouse")
    if report["partial_records"]:
        typer.echo(f"partial      {report['partial_records']:,} studies are partial records (no status, phase, type or "
                   "dates: fetched with a restricted `fields`); they show as (none) below and in the statistics")
    run = report["last_run"]
    if run:
        typer.echo(f"last run     {run['command']} from {run['source']} at {run['finished_at']}"
                   f" (data timestamp {run['data_timestamp'] or 'unknown'})")
    failure = report["last_failure"]
    if failure and report["last_run_failed"]:
        typer.echo(f"LAST FAILED  {failure['command']} from {failure['source']} at {failure['finished_at']}: "
                   f"{failure['note']}")
    typer.echo("by status    " + ", ".join(f"{r['overall_status']} {r['studies']:,}" for r in report["by_status"]))
    typer.echo("by phase     " + ", ".join(f"{r['phase']} {r['studies']:,}" for r in report["by_phase"]))
    if report["exact_at"]:
        exact = report["exact_at"]
        typer.echo(f"as of {exact['as_of']}  {exact['exact']:,} of {exact['studies']:,} studies shown exactly "
                   f"({100 * (exact['share_exact'] or 0):.1f}%); the others reconstructed from a later version "
                   "(`ctmirror history` fetches theirs)")


DateOption = Annotated[Optional[str], typer.Option("--date-before", "--as-of",
                                                   help="Cutoff date YYYY-MM-DD: answer as the registry stood then.")]
HoldoutOption = Annotated[str, typer.Option("--holdout", help="strict (only what was published by the cutoff) "
                                                              "or first_posted (the live API's rule).")]
def _json_requested(value: bool) -> bool:
    options.json = options.json or bool(value)
    return value


JsonOption = Annotated[bool, typer.Option("--json", callback=_json_requested,
                                          help="Print the result, or the error, as the contract's JSON.")]


def open_mirror(as_of: str | None = None):
    from ctmirror.read.mirror import Mirror

    return Mirror(options.warehouse, as_of=as_of)


def emit_json(value) -> None:
    from pydantic import BaseModel

    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        typer.echo(json.dumps([v.model_dump(mode="json") for v in value], indent=2, ensure_ascii=False))
    elif isinstance(value, BaseModel):
        typer.echo(json.dumps(value.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        typer.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _cli_form(name: str, info) -> str | tuple[str, ...]:
    """How the CLI takes a request field: "argument" (positional), or its option flags (--field-name unless the
    registry names others)."""
    return (info.json_schema_extra or {}).get("cli") or (f"--{name.replace('_', '-')}",)


def _cli_parameter(name: str, info) -> inspect.Parameter:
    """A request field as a Typer parameter. An option left out is None, which the request model reads as its
    default."""
    cli = _cli_form(name, info)
    python_type = int if info.annotation is int else str
    if cli == "argument":
        required = info.is_required()
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                 default=inspect.Parameter.empty if required else None,
                                 annotation=Annotated[python_type if required else Optional[python_type],
                                                      typer.Argument(help=info.description)])
    shown = None if info.default is None else info.default  # shown in --help as the default
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=shown,
                             annotation=Annotated[Optional[python_type], typer.Option(*cli, help=info.description)])


def cli_example(method, command: str) -> str:
    """`ctmirror <command> ...` for the method's example call."""
    words = [command]
    for name, value in method.example.items():
        cli = _cli_form(name, method.request.model_fields[name])
        text = f'"{value}"' if " " in str(value) else str(value)
        words += [text] if cli == "argument" else [cli[0], text]
    return "ctmirror " + " ".join(words)


def _show(method, answer, as_json: bool, arguments: dict) -> None:
    from ctmirror.read.models import PaginationEnvelope

    if answer is None:  # a trial by ID that is not there
        raise NotFound(f"{arguments.get('nct_id')}: not found", invalid_input=arguments.get("nct_id"))
    note = left_out_note(answer)
    if as_json:
        emit_json(answer.contract_json() if isinstance(answer, PaginationEnvelope) else answer)
        if note and isinstance(answer, list):  # a list's JSON has no place for it
            typer.echo(note, err=True)
        return
    typer.echo(method.render(answer) + (f"\n{note}" if note else ""))


def _method_command(method) -> None:
    """The CLI command of a registered method: its request's fields as arguments and options, and --json."""
    def command(**given):
        as_json = given.pop("as_json", False)
        as_of = given.pop("mirror_as_of", None)
        arguments = {k: v for k, v in given.items() if v is not None}
        with open_mirror(as_of) as m:
            answer = m.call(method.name, **arguments)
        _show(method, answer, as_json, arguments)

    parameters = [_cli_parameter(name, info) for name, info in method.request.model_fields.items()]
    if "date_before" not in method.request.model_fields:  # a single trial: as the registry showed it that day
        parameters.append(inspect.Parameter("mirror_as_of", inspect.Parameter.KEYWORD_ONLY, default=None,
                                            annotation=Annotated[Optional[str], typer.Option(
                                                "--as-of", help="Cutoff date YYYY-MM-DD: the trial as the "
                                                                "registry showed it then.")]))
    parameters.append(inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, default=False,
                                        annotation=JsonOption))
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__doc__ = f"{method.help}\n\nExample: {cli_example(method, method.command)}"
    app.command(method.command)(command)


def _statistics_command() -> None:
    """`ctmirror stats NAME ...`: any registry statistic, with the options they share."""
    from ctmirror.read.registry import STATISTIC_NAMES, StatisticRequest

    def command(name: str, **given):
        as_json = given.pop("as_json", False)
        arguments = {k: v for k, v in given.items() if v is not None}
        with open_mirror() as m:
            answer = m.stats(name, **arguments)
        _show(METHODS[name], answer, as_json, arguments)  # m.stats refused any other name

    name = inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[str, typer.Argument(
        help=f"One of {', '.join(STATISTIC_NAMES)} (`ctmirror stats --help`; docs/statistics.md).")])
    parameters = [name, *(_cli_parameter(n, info) for n, info in StatisticRequest.model_fields.items()),
                  inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=JsonOption)]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__doc__ = ("One of the registry statistics (counts by phase, status, country, sponsor, funnel, ...) for a "
                       "scope.\n\nExample: ctmirror stats stats_by_phase --condition diabetes --date-before 2020-01-01")
    app.command("stats")(command)


for _method in METHODS.values():
    if _method.command is not None:
        _method_command(_method)
_statistics_command()


@app.command()
def snapshot(
    as_of: Annotated[str, typer.Option("--as-of", help="Cutoff date YYYY-MM-DD.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to create (must not exist).")],
    state: Annotated[Optional[str], typer.Option("--state", help="A kept state (default: the current one).")] = None,
    exact_only: Annotated[bool, typer.Option(
        "--exact-only", help="Only the studies whose version of that day is held (no reconstruction).")] = False,
) -> None:
    """Write a frozen, self-contained strict as-of snapshot that Mirror(DIR) and `-w DIR` open like a warehouse.

    Example: ctmirror snapshot --as-of 2019-06-01 --out snapshots/2019-06-01
    """
    from ctmirror.read import arguments
    from ingest.snapshot import build_snapshot

    warehouse = open_warehouse()
    manifest = build_snapshot(warehouse, arguments.cutoff(as_of), out, state=warehouse.state(state),
                              exact_only=exact_only)
    left_out = (f"; {manifest['left_out']:,} reconstructed studies left out" if exact_only else "")
    typer.echo(f"snapshot of state {manifest['source_state']} as of {manifest['cutoff']} ({manifest['mode']}) in "
               f"{out}: {manifest['studies']:,} studies ({manifest['exact_studies']:,} exact){left_out}, content "
               f"hash {manifest['content_hash']}")


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback unless you say otherwise).")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Answer everything strictly as of this date.")] = None,
    exact_only: Annotated[bool, typer.Option(
        "--exact-only", help="With --as-of: only studies whose version of that day the warehouse holds (no "
                             "reconstruction; leak-proof backtests).")] = False,
    workers: Annotated[int, typer.Option("--workers", help="Worker processes, each with its own readers.")] = 1,
    readers: Annotated[Optional[int], typer.Option(
        "--readers", help="Queries a worker runs at once (default: the machine's cores shared among the workers).")]
    = None,
    sql: Annotated[bool, typer.Option("--sql", help="Enable the read-only SQL endpoint /ctmirror/v1/sql.")] = False,
    sql_memory_limit: Annotated[str, typer.Option(
        "--sql-memory-limit", help="Memory a query of the SQL endpoint may use (e.g. 1GB); more fails the query.")]
    = "1GB",
    allow_host: Annotated[Optional[list[str]], typer.Option(
        "--allow-host", help="A host name clients may reach the server by, besides the loopback names and --host "
                             "(repeat for several). Requests naming another host are refused.")] = None,
) -> None:
    """Serve the warehouse over HTTP: the ClinicalTrials.gov v2 API under /api/v2 (point a client's base URL here),
    and every method and statistic under /ctmirror/v1 (OpenAPI at /ctmirror/v1/openapi.json). A newly published
    state is picked up between requests; SIGTERM finishes the requests in flight, then stops.

    Example: ctmirror serve --port 8000 --as-of 2019-06-01
    """
    from ctmirror.read import arguments
    from ctmirror.read.mirror import Mirror
    from ctmirror.server.app import Settings
    from ctmirror.server.app import serve as run

    if workers < 1 or (readers is not None and readers < 1):
        raise InvalidArgument("--workers and --readers must be at least 1")
    readers = readers or max(1, CORES // workers)  # a query runs on one core: more at once stretch each one
    root = Warehouse(options.warehouse).root
    settings = Settings(root, as_of=arguments.cutoff(as_of), sql=sql, readers=readers, host=host,
                        allow_hosts=tuple(allow_host or ()), sql_memory_limit=sql_memory_limit, exact_only=exact_only)
    Mirror(root, as_of=settings.as_of).close()  # a wrong folder fails here, with the warehouse's own message
    say(f"serving {root} on http://{host}:{port} (/api/v2, /ctmirror/v1)"
        + (f" as of {settings.as_of}" if settings.as_of else ""))
    run(settings, host=host, port=port, workers=workers)


@app.command("mcp")
def mcp_command(
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Answer every tool strictly as of this date.")]
    = None,
    exact_only: Annotated[bool, typer.Option(
        "--exact-only", help="With --as-of: only studies whose version of that day the warehouse holds (no "
                             "reconstruction; leak-proof backtests).")] = False,
) -> None:
    """Agent tools over the Model Context Protocol, on stdin/stdout: every method and statistic, a study record,
    counts, field values and definitions, posted results, find_eligible. Add it to an MCP client's configuration
    as the command `ctmirror -w WAREHOUSE mcp`; `ctmirror serve` offers the same at /mcp over HTTP.

    Example: ctmirror -w warehouse mcp --as-of 2019-06-01
    """
    from ctmirror.read import arguments
    from ctmirror.server.agent_tools import run_stdio

    run_stdio(Warehouse(options.warehouse).root, as_of=arguments.cutoff(as_of), exact_only=exact_only)


@app.command()
def pin(state: Annotated[str, typer.Argument(help="A published state id (see `ctmirror status`).")],
        remove: Annotated[bool, typer.Option("--remove", help="Unpin instead.")] = False) -> None:
    """Keep a published state past the retention of the last N, so a backtest can reopen it later.

    Example: ctmirror pin 000042
    """
    warehouse = open_warehouse()
    with warehouse.writing():
        warehouse.state(state)  # exists?
        pinned = warehouse.set_pinned(state, not remove)
    typer.echo(f"pinned states: {', '.join(sorted(pinned)) or 'none'}")


@app.command()
def history(
    nct_ids: Annotated[Optional[list[str]], typer.Argument(help="NCT IDs whose past versions to fetch.")] = None,
    from_file: Annotated[Optional[Path], typer.Option("--from-file", help="A file of NCT IDs, one a line.")] = None,
    condition: Annotated[Optional[str], typer.Option(
        "--condition", help="Every study of the current state this condition finds (as `search --condition`).")]
    = None,
    intervention: Annotated[Optional[str], typer.Option(
        "--intervention", help="Every study this drug or treatment finds (with --condition: both).")] = None,
    base_url: Annotated[str, typer.Option("--base-url", envvar="CTMIRROR_BASE_URL",
                                          help="Website host.")] = "https://clinicaltrials.gov",
    interval: Annotated[float, typer.Option("--interval", help="Minimum seconds between requests.")] = 1.2,
) -> None:
    """Fetch studies' past versions from the website's (undocumented, unstable) history endpoints into
    study_versions, so strict as-of answers for them are exact: the studies named, listed in a file, or found by a
    condition or intervention. Paced (--interval), resumable like sync (run the same command again), with progress
    and a summary.

    Example: ctmirror history --condition "erectile dysfunction"
    """
    from ctmirror.read import arguments
    from ingest.history import fetch_history

    ids = list(nct_ids or [])
    if from_file:
        ids += [line.strip() for line in from_file.read_text().splitlines() if line.strip()]
    if condition or intervention:
        ids += studies_found(condition=condition, intervention=intervention)
    if not ids:
        raise InvalidArgument("give NCT IDs, --from-file, or --condition/--intervention that find studies")
    ids = list(dict.fromkeys(arguments.nct_id(i) for i in ids))
    progress = SyncProgress("history")
    try:
        result = fetch_history(open_warehouse(), ids, base_url=base_url, min_interval=interval, progress=progress)
    finally:
        progress.close()
    typer.echo(result.summary)


def studies_found(**filters: str | None) -> list[str]:
    """The NCT IDs of every study `search` finds with these filters on the current state, page by page."""
    from ctmirror.read.mirror import Mirror

    found: list[str] = []
    with Mirror(options.warehouse) as mirror:
        cursor = None
        while True:
            page = mirror.search(**filters, page_size=200, cursor=cursor)
            found += [item.nct_id for item in page.items]
            cursor = page.pagination.cursor
            if cursor is None:
                return found


@app.command()
def synonyms(
    term: Annotated[str, typer.Argument(help="A condition or drug as a query would name it.")],
    field: Annotated[str, typer.Option("--field", help="condition, intervention or term (query.term's free "
                                                       "text).")] = "condition",
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="What the records had taught by this day "
                                                                  "(YYYY-MM-DD).")] = None,
    as_json: JsonOption = False,
) -> None:
    """What a query term also finds: its synonym groups (the synonym files, an imported MeSH thesaurus), the MeSH
    headings and the other drug names the records teach, and which studies taught them.

    Example: ctmirror synonyms Keytruda --field intervention
    """
    with open_mirror(as_of) as mirror:
        rows = mirror.expansions(term, field)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        typer.echo(f"{term!r} finds only itself as a {field} (its words, as a phrase or scattered)")
        return
    for row in rows:
        taught = ""
        if row["taught_by"]:
            more = row["teaching_studies"] - len(row["taught_by"])
            taught = f"  taught by {', '.join(row['taught_by'])}" + (f" and {more:,} more" if more > 0 else "")
        source = f"  ({row['source']})" if row["source"] else ""
        typer.echo(f"{row['kind']:<10}  {row['phrase']}{source}{taught}")


thesaurus_app = typer.Typer(help="Thesauri the matcher expands queries with.", no_args_is_help=True)
app.add_typer(thesaurus_app, name="thesaurus")


@thesaurus_app.command("import")
def thesaurus_import(
    source: Annotated[Path, typer.Argument(help="NLM's MeSH descriptor file, desc20XX.xml (or .xml.gz).")],
) -> None:
    """Import MeSH's entry terms as synonyms ("Heart Attack" finds "Myocardial Infarction") and publish the
    current state again with them. The file is public: https://www.nlm.nih.gov/databases/download/mesh.html

    Example: ctmirror thesaurus import desc2026.xml
    """
    from ingest.loader import republish as republish_state
    from ingest.thesaurus import import_mesh

    warehouse = open_warehouse()
    with warehouse.writing():
        imported = import_mesh(warehouse.root, source)
    typer.echo(f"{imported.groups:,} MeSH headings with {imported.phrases:,} phrases imported from "
               f"{imported.descriptors:,} descriptors ({imported.ambiguous:,} ambiguous terms left out)")
    if warehouse.current_state() is not None:
        state = republish_state(warehouse, on_phase=phase)
        typer.echo(f"published state {state.state_id} with them")
    else:
        typer.echo("they apply from the first load")


report_app = typer.Typer(help="Reports people can look at.", no_args_is_help=True)
app.add_typer(report_app, name="report")


@report_app.command("landscape")
def report_landscape(
    condition: Annotated[str, typer.Argument(help="Disease or condition.")],
    out: Annotated[Path, typer.Option("--out", help="report.html or .pdf, or a folder for --format png.")],
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Cutoff date YYYY-MM-DD (strict).")] = None,
    output_format: Annotated[str, typer.Option(
        "--format", help="html (one page), pdf (the page, printed) or png (one file a chart).")] = "html",
) -> None:
    """A self-contained HTML report on one condition: its scope at the top, phases, statuses, competitors, starts
    per year, sponsors, stopped trials, a world map of sites. `--format pdf` prints it and `--format png` writes
    each chart as PNG (both need Debian's chromium).

    Example: ctmirror report landscape NASH --as-of 2019-06-01 --out nash.html
    """
    from ctmirror.read import arguments
    from ctmirror.read.report import chromium, html_to_pdf, landscape_charts, landscape_report, svg_to_png

    cutoff = arguments.cutoff(as_of)
    arguments.text("condition", condition)
    refuse_inside_warehouse(out)
    if output_format not in ("html", "pdf", "png"):
        raise InvalidArgument(f"--format must be html, pdf or png, not {output_format!r}", invalid_input=output_format)
    if output_format != "html":
        chromium(f"{output_format.upper()} reports")  # before any work: a clear error when it is missing
    with open_mirror() as m:
        if output_format == "png":
            out.mkdir(parents=True, exist_ok=True)
            for name, svg in landscape_charts(m, condition, cutoff).items():
                svg_to_png(svg, out / f"{name}.png")
            typer.echo(f"charts written to {out}")
            return
        page = landscape_report(m, condition, cutoff)
        if output_format == "pdf":
            html_to_pdf(page, out)
        else:
            out.write_text(page, encoding="utf-8")
    typer.echo(f"report written to {out}")


@app.command("sql")
def sql_command(
    query: Annotated[Optional[str], typer.Argument(help="One SELECT; none opens a prompt.")] = None,
    file: Annotated[Optional[Path], typer.Option("--file", "-f", help="Read the query from a file.")] = None,
    output_format: Annotated[str, typer.Option("--format", help="table, csv, json or parquet.")] = "table",
    out: Annotated[Optional[Path], typer.Option("--out", help="Write to this file (required for parquet).")] = None,
    limit: Annotated[int, typer.Option("--limit", help="At most this many rows (table/csv/json).")] = 1000,
    timeout: Annotated[float, typer.Option("--timeout", help="Stop a query after this many seconds.")] = 60.0,
) -> None:
    """Run read-only SQL on the warehouse: tables, views and the method macros. Writes are refused.

    Example: ctmirror sql "SELECT phase, count(*) FROM studies GROUP BY ALL ORDER BY 2 DESC"
    """
    from ctmirror.read.console import query_frame, run_query
    from ctmirror.read.render import table

    if output_format not in ("table", "csv", "json", "parquet"):
        raise InvalidArgument(f"--format must be table, csv, json or parquet, got {output_format!r}")
    if out is not None:
        refuse_inside_warehouse(out)
    with open_mirror() as m:
        if file is not None:
            query = file.read_text(encoding="utf-8")
        if query is None:
            return _prompt(m, limit, timeout)
        if output_format == "parquet":
            if out is None:
                raise InvalidArgument("--format parquet needs --out FILE")
            frame = query_frame(m, query, timeout=timeout)
            frame.write_parquet(out)
            typer.echo(f"{frame.height:,} rows written to {out}")
            return
        result = run_query(m, query, limit=limit, timeout=timeout)
    rows = [dict(zip(result.columns, r)) for r in result.rows]
    if output_format == "table":
        text = table(rows, result.columns)
    elif output_format == "json":
        text = json.dumps(rows, indent=2, default=str, ensure_ascii=False)
    else:
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(result.columns)
        writer.writerows(result.rows)
        text = buffer.getvalue().rstrip("\n")
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
    else:
        typer.echo(text)
    if result.truncated:
        say(f"(first {limit:,} rows; raise --limit for more)")


PROMPT_HELP = """End a query with ';'. Dot-commands:
  .tables          the tables and views, with what each holds
  .schema TABLE    a table's columns, types and meanings
  .help            this text
  .quit            leave (also .exit, Ctrl-D)"""


def _prompt(m, limit: int, timeout: float) -> None:
    from ctmirror.core.errors import CtmirrorError
    from ctmirror.core.sqlfiles import read_sql
    from ctmirror.read.console import run_query
    from ctmirror.read.render import table

    typer.echo(f"ctmirror sql on state {m.state_id} (read-only). End a query with ';'. .help for more, .quit to leave.")
    buffer: list[str] = []
    while True:
        try:
            line = input("sql> " if not buffer else "...> ")
        except EOFError:
            return
        command, _, argument = line.strip().partition(" ")
        if not buffer and command.startswith("."):
            if command in (".quit", ".exit"):
                return
            if command == ".help":
                typer.echo(PROMPT_HELP)
            elif command == ".tables":
                typer.echo(table(m.rows(read_sql("catalog/queries/documented_views.sql")), ["view_name", "comment"],
                                 max_width=90))
            elif command == ".schema" and argument.strip():
                documented = read_sql("catalog/queries/status.sql", "documented_columns")
                columns = m.rows(documented, {"view": argument.strip()})
                typer.echo(table(columns, ["column_name", "data_type", "comment"], max_width=80) if columns else
                           f"no table or view named {argument.strip()!r}: .tables lists them")
            else:
                typer.echo(f"unknown command {line.strip()!r}: .help lists the dot-commands")
            continue
        if not buffer and line.strip() == "\\q":
            return
        buffer.append(line)
        if not line.rstrip().endswith(";"):
            continue
        text, buffer = "\n".join(buffer), []
        try:
            result = run_query(m, text.rstrip().rstrip(";"), limit=limit, timeout=timeout)
        except CtmirrorError as exc:
            typer.echo(f"error: {exc}")
            continue
        typer.echo(table([dict(zip(result.columns, r)) for r in result.rows], result.columns))


def main() -> None:
    try:
        code = app(standalone_mode=False)  # returns, rather than raises, a typer.Exit's code
        sys.exit(code if isinstance(code, int) else 0)
    except CtmirrorError as exc:
        if options.debug:
            raise
        if options.json:  # the contract's envelope on stdout; stderr stays for people
            typer.echo(json.dumps(exc.envelope(), indent=2, ensure_ascii=False))
        typer.echo(f"error: {exc}", err=True)
        typer.echo(f"hint: {exc.recovery_hint}", err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:  # Ctrl-C at a prompt
        sys.exit(130)
    except typer.TyperException as exc:  # a usage error of the command line (its parser's ClickException)
        exc.show()  # type: ignore[attr-defined]
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    except Exception as exc:
        if options.debug:
            raise
        known = machine_failure(exc)
        if known is not None:
            typer.echo(f"error: {known}", err=True)
            typer.echo(f"hint: {known.recovery_hint}", err=True)
            sys.exit(known.exit_code)
        typer.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        typer.echo("hint: run again with --debug for the traceback, and report it", err=True)
        sys.exit(2)


def machine_failure(exc: BaseException) -> CtmirrorError | None:
    """A failure of the machine rather than of ctmirror, said as such: a full disk, a memory budget too small.
    DuckDB words them its own way (a full disk while writing Parquet reads `Invalid thrift: transport error`)."""
    import errno

    chain, seen = [], exc
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    for error in chain:
        text = str(error)
        if (isinstance(error, OSError) and error.errno == errno.ENOSPC) or "No space left on device" in text:
            where = getattr(error, "filename", None) or options.warehouse or "the warehouse's disk"
            return CtmirrorError(f"no space left on the disk of {where}",
                                 hint="free space (or move the warehouse) and run the same command again: nothing "
                                      "half-written is ever published, and a sync resumes")
        if "Out of Memory" in text or isinstance(error, MemoryError):
            budget = os.environ.get(MEMORY_LIMIT_ENV) or "the default (a quarter of the machine's memory, 4GB at most)"
            return CtmirrorError(f"a memory budget of {budget} is too small for this work: {text.splitlines()[0]}",
                                 hint="give it more with --memory-limit (e.g. 2GB), or close what else uses memory")
    return None


if __name__ == "__main__":
    main()
