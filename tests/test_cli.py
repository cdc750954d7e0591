"""The `ctmirror` command as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import duckdb
import pytest
from conftest import nct, write_ndjson

from ctmirror import Mirror
from ctmirror.core.errors import WarehouseError
from ctmirror.core.warehouse import Warehouse
from ctmirror.read.readonly import ReadOnlyViolation

pytestmark = pytest.mark.slow  # runs the CLI in subprocesses


def ctmirror(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctmirror.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def test_load_status_through_the_environment_variable(tmp_path, records):
    source = write_ndjson(tmp_path / "a.ndjson", records[:25])
    env = {"CTMIRROR_WAREHOUSE": str(tmp_path / "w")}
    loaded = ctmirror("load", str(source), env=env)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.startswith("25 records: 25 new studies")
    status = ctmirror("status", "--json", env=env)
    report = json.loads(status.stdout)
    assert (report["studies"], report["versions"], report["quarantined"]) == (25, 25, 0)
    assert report["last_run"]["command"] == "load"
    assert sum(r["studies"] for r in report["by_status"]) == 25


def test_errors_are_one_line_with_a_hint(tmp_path):
    missing = ctmirror("--warehouse", str(tmp_path / "w"), "load", str(tmp_path / "nope.json"))
    assert missing.returncode == 2
    assert missing.stderr.startswith(f"error: {tmp_path / 'nope.json'}: no such file or folder")
    assert "Traceback" not in missing.stderr
    empty = ctmirror("--warehouse", str(tmp_path / "empty"), "status")
    assert empty.returncode == 2
    assert "no published data" in empty.stderr and "ctmirror load --sample" in empty.stderr


def test_every_command_has_help_with_an_example():
    for command in ("load", "rebuild", "republish", "status"):
        shown = ctmirror(command, "--help")
        assert shown.returncode == 0 and "Example: ctmirror" in shown.stdout, command


def test_mirror_is_read_only(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        with pytest.raises(ReadOnlyViolation, match="read-only: a CREATE statement"):
            m.sql("CREATE TABLE x AS SELECT 1")
        frame = m.sql("SELECT nct_id FROM studies WHERE nct_id = $id", {"id": "NCT00711542"})
        assert frame.to_dicts() == [{"nct_id": "NCT00711542"}]


def test_catalog_file_opens_in_any_duckdb_session(sample_warehouse):
    con = duckdb.connect(str(sample_warehouse / "ctmirror.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM studies").fetchone()[0] == 2279
    assert con.execute("SELECT display_phase(['PHASE2', 'PHASE3'])").fetchone()[0] == "Phase 2/Phase 3"


def test_a_state_published_by_another_version_is_refused_until_republished(tmp_path, records):
    source = write_ndjson(tmp_path / "a.ndjson", records[:25])
    env = {"CTMIRROR_WAREHOUSE": str(tmp_path / "w")}
    assert ctmirror("load", str(source), env=env).returncode == 0
    with Mirror(tmp_path / "w") as m:
        condition = m.rows("SELECT condition FROM conditions ORDER BY nct_id, ordinal LIMIT 1")[0]["condition"]
        answers = (m.get_trial(nct(records[0])), m.get_landscape(condition))
    before = Warehouse(tmp_path / "w").state()
    con = duckdb.connect(str(before.catalog))
    con.execute("DROP TABLE catalog_format")  # what a catalog built before formats looks like
    con.close()
    with pytest.raises(WarehouseError, match="published by another version of ctmirror") as refused:
        Mirror(tmp_path / "w")
    assert "ctmirror republish" in refused.value.hint
    shown = ctmirror("trial", nct(records[0]), env=env)
    assert shown.returncode == 2 and "ctmirror republish" in shown.stderr
    republished = ctmirror("republish", env=env)
    assert republished.returncode == 0, republished.stderr
    after = Warehouse(tmp_path / "w").state()
    assert after.state_id != before.state_id and after.meta["counts"] == before.meta["counts"]
    with Mirror(tmp_path / "w") as m:
        assert (m.get_trial(nct(records[0])), m.get_landscape(condition)) == answers


def test_with_json_every_outcome_on_stdout_is_json(sample_warehouse, tmp_path):
    found = ctmirror("-w", str(sample_warehouse), "trial", "NCT:00711542", "--json")
    missing = ctmirror("-w", str(sample_warehouse), "trial", "NCT99999999", "--json")
    invalid = ctmirror("-w", str(sample_warehouse), "search", "--phase", "PHASE5", "--json")
    nowhere = ctmirror("-w", str(tmp_path / "nowhere"), "status", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["nct_id"] == "NCT00711542"  # the contract's form
    for done, code, exit_code in ((missing, "NOT_FOUND", 1), (invalid, "INVALID_INPUT", 2),
                                  (nowhere, "WAREHOUSE_UNAVAILABLE", 2)):
        envelope = json.loads(done.stdout)
        assert done.returncode == exit_code, done.stderr
        assert envelope["success"] is False and envelope["error"]["code"] == code
        assert set(envelope["error"]) == {"code", "message", "recovery_hint", "invalid_input"}
        assert done.stderr.startswith("error: ")  # stderr stays for people


def test_every_error_maps_the_same_way_on_every_surface():
    from ctmirror.core import errors

    expected = {errors.InputError: ("INVALID_INPUT", 400, 2), errors.InvalidArgument: ("INVALID_INPUT", 400, 2),
                errors.InvalidNctId: ("INVALID_INPUT", 400, 2), errors.NotFound: ("NOT_FOUND", 404, 1),
                errors.WarehouseError: ("WAREHOUSE_UNAVAILABLE", 503, 2),
                errors.StateNotFound: ("STATE_EXPIRED", 410, 2), errors.HarvestError: ("UPSTREAM_ERROR", 502, 2),
                errors.RetryableHarvestError: ("UPSTREAM_ERROR", 502, 2),
                errors.TerminalHarvestError: ("UPSTREAM_ERROR", 502, 2)}
    for kind, (code, status, exit_code) in expected.items():
        error = kind("what went wrong")
        assert (error.code, error.http_status, error.exit_code) == (code, status, exit_code), kind
        assert error.envelope()["error"]["recovery_hint"]  # every error says what to do


def test_status_says_how_many_records_are_partial(sample_warehouse, records):
    partial = sum(1 for r in records if not r["protocolSection"].get("statusModule"))
    assert partial == 486  # the sample's records fetched with a restricted `fields`
    report = json.loads(ctmirror("-w", str(sample_warehouse), "status", "--json").stdout)
    assert report["partial_records"] == partial
    shown = ctmirror("-w", str(sample_warehouse), "status").stdout
    assert "partial      486 studies are partial records" in shown


def test_publishing_shows_each_phase_and_quiet_silences_it_but_not_quarantine_warnings(tmp_path, records):
    broken = dict(records[1], protocolSection={"identificationModule": {"nctId": "not an id"}})
    source = write_ndjson(tmp_path / "a.ndjson", [records[0], broken])
    loud = ctmirror("-w", str(tmp_path / "loud"), "load", str(source))
    assert loud.returncode == 0, loud.stderr
    phases = [line for line in loud.stderr.splitlines() if line.startswith("publishing state 000001: ")]
    assert phases[0].endswith("record files of 1 segment") and phases[-1].endswith("making it current")
    assert phases[1].endswith("the records out of study_versions in 1 segment")
    assert phases[2].endswith("reading every version of 1 segment")
    indexes = [p.split(": index ", 1)[1] for p in phases if ": index " in p]
    assert len(indexes) >= 10 and all(f" of {len(indexes)} (" in p for p in indexes)
    assert sorted(int(p.split()[0]) for p in indexes) == list(range(1, len(indexes) + 1))
    assert "quarantined:" in loud.stderr
    quiet = ctmirror("-q", "-w", str(tmp_path / "quiet"), "load", str(source))
    assert quiet.returncode == 0 and "publishing state" not in quiet.stderr
    assert "quarantined:" in quiet.stderr and quiet.stdout.startswith("2 records: 1 new studies")


def test_off_a_terminal_long_commands_log_a_progress_line_now_and_then(tmp_path, records):
    source = write_ndjson(tmp_path / "a.ndjson", records[:120])
    loaded = ctmirror("-w", str(tmp_path / "w"), "load", str(source), env={"CTMIRROR_PROGRESS_SECONDS": "0"})
    assert loaded.returncode == 0, loaded.stderr
    lines = [line for line in loaded.stderr.splitlines() if line.startswith("loading: ")]
    assert lines and lines[-1].startswith("loading: 120 records, ") and lines[-1].endswith("/s")
    rebuilt = ctmirror("-w", str(tmp_path / "w"), "rebuild", env={"CTMIRROR_PROGRESS_SECONDS": "0"})
    lines = [line for line in rebuilt.stderr.splitlines() if line.startswith("rebuilding: ")]
    assert rebuilt.returncode == 0 and lines[0].startswith("rebuilding: 1 of 120 records, ") and "min left" in lines[0]
    assert len(lines) >= 120  # a line a record at 0 s; by default one every 10 s (a rebuild of seconds: none)


def test_offline_failures_exit_2_with_their_hint_and_status_shows_them(tmp_path):
    env = {"CTMIRROR_WAREHOUSE": str(tmp_path / "w")}
    bulk = ctmirror("sync", "--from-bulk", "http://127.0.0.1:9/ctg-studies.json.zip", env=env)
    assert bulk.returncode == 2 and "cannot download" in bulk.stderr and "hint: " in bulk.stderr
    assert "Traceback" not in bulk.stderr
    status = ctmirror("status", "--json", env=env)
    assert status.returncode == 2
    report = json.loads(status.stdout)
    assert report["state"] is None and report["last_run_failed"] and "cannot download" in report["last_failure"]["note"]
