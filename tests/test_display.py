"""What the terminal shows: one ID and phase format across the commands' tables; cut names that still differ."""

from __future__ import annotations

import re

from ctmirror import Mirror
from ctmirror.read.display import search_page
from ctmirror.read.registry import METHODS
from ctmirror.read.render import table


def test_search_and_search_trials_tables_show_ids_and_phases_alike(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        page = m.search(condition="erectile dysfunction", phase="PHASE3", page_size=5)
        found = m.search_trials("tadalafil", "erectile dysfunction", phase_filter="PHASE3", max_results=5)
    assert page.items and found and page.items[0].id.startswith("NCT:")  # the contract's JSON form, kept
    searched = search_page(page)
    listed = METHODS["search_trials"].render(found)
    for text in (searched, listed):
        assert re.search(r"^NCT\d{8}  ", text.splitlines()[2]) and "Phase 3" in text
        assert "NCT:" not in text and "PHASE3" not in text


def test_values_that_differ_only_past_the_cut_are_shown_with_their_ends():
    rows = [{"sponsor": "Novartis Pharmaceuticals Corporation, East Hanover"},
            {"sponsor": "Novartis Pharmaceuticals Corporation, Basel"}, {"sponsor": "Pfizer"}]
    shown = table(rows, ["sponsor"], max_width=30).splitlines()[2:]
    assert len(set(shown)) == 3 and shown[0].endswith("East Hanover") and shown[1].endswith("Basel")
    alone = table(rows[:1] + rows[2:], ["sponsor"], max_width=30).splitlines()[2:]
    assert alone[0].endswith("…")  # no collision: the plain cut



def test_a_full_disk_and_a_small_budget_are_named_as_such():
    import errno

    import duckdb

    from ctmirror.cli import machine_failure

    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device", "/data/warehouse/segments/x.parquet")
        except OSError as full:
            raise duckdb.IOException("Invalid thrift: transport error") from full
    except duckdb.IOException as wrapped:
        named = machine_failure(wrapped)
    assert str(named) == "no space left on the disk of /data/warehouse/segments/x.parquet" and named.exit_code == 2
    small = machine_failure(duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 2 MiB"))
    assert str(small).startswith("a memory budget of ") and "--memory-limit" in small.hint
    assert machine_failure(ValueError("something else")) is None


def test_off_a_terminal_progress_is_a_line_now_and_then_not_a_line_a_record(capsys, monkeypatch):
    from ctmirror import cli

    monkeypatch.setattr(cli, "LOG_EVERY_SECONDS", 10.0)
    clock = iter(range(0, 10_000, 1))  # one second a record
    monkeypatch.setattr(cli.time, "monotonic", lambda: float(next(clock)))
    with cli.Progress(100, "records", "rebuilding") as progress:
        for _ in range(100):
            progress.update()
    lines = capsys.readouterr().err.splitlines()
    assert 8 <= len(lines) <= 12 and all(line.startswith("rebuilding: ") for line in lines)
    assert " of 100 records, " in lines[0] and "min left" in lines[0] and lines[-1].startswith("rebuilding: 100 of")


def test_tables_mark_and_count_the_rows_reconstructed_for_a_cutoff(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        then = m.search_trials("placebo", "cancer", date_before="2015-01-01", max_results=20)
        now = m.search_trials("placebo", "cancer", max_results=20)
        page = m.search(condition="cancer", date_before="2015-01-01", page_size=20)
    reconstructed = [t.nct_id for t in then if t.as_of_exact is False]
    assert reconstructed and len(reconstructed) < len(then) + 1
    shown = METHODS["search_trials"].render(then)
    assert all(f"{nct_id}*" in shown for nct_id in reconstructed)
    assert f"* {len(reconstructed)} of {len(then)} reconstructed from a later version" in shown
    assert "*" not in METHODS["search_trials"].render(now)  # the current state's rows are all exact
    assert "reconstructed from a later version" in search_page(page)
