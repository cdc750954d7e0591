"""Layers point one way, folder by folder: the core (ctmirror/core/) imports nothing above it; the write side
(ingest/) and the read side (ctmirror/read/: Mirror, the methods, statistics, console, report) stand on the core
only; the server (ctmirror/server/) on the read side; the CLI (ctmirror/cli.py) on top of them all."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = "ctmirror.core"
CLI = {"ctmirror.cli", "ctmirror.docs"}  # the docs generator documents the CLI: it sits on top too
SERVER = "ctmirror.server"
READ = "ctmirror.read"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in ("ctmirror", "ingest")}


def layer(module: str) -> str:
    if module == CORE or module.startswith(CORE + "."):
        return "core"
    if module.split(".")[0] == "ingest":
        return "write"
    if module in CLI:
        return "cli"
    if module == SERVER or module.startswith(SERVER + "."):
        return "serve"
    if module in (READ, "ctmirror") or module.startswith(READ + "."):  # the package re-exports the read side's API
        return "read"
    return f"no layer: {module}"


def known_module(name: str) -> str | None:
    """The module an imported name refers to (a `from x import y` may name a function of x)."""
    candidate = name
    while candidate:
        path = ROOT / Path(*candidate.split("."))
        if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
            return candidate
        candidate = candidate.rpartition(".")[0]
    return None


ALLOWED = {"core": {"core"}, "write": {"core", "write"}, "read": {"core", "read"}, "serve": {"core", "read", "serve"},
           "cli": {"core", "read", "write", "serve", "cli"}}


def test_every_import_points_down():
    broken = []
    for path in sorted([*(ROOT / "ctmirror").rglob("*.py"), *(ROOT / "ingest").rglob("*.py")]):
        module = module_name(path)
        for name in imports_of(path):
            target = known_module(name) or name
            target_layer = layer(target)
            if target_layer not in ALLOWED.get(layer(module), ()):
                broken.append(f"{module} ({layer(module)}) imports {target} ({target_layer})")
    assert broken == []


@pytest.mark.slow
def test_the_read_side_loads_nothing_of_the_write_side(sample_warehouse):
    """`import ctmirror` and a Mirror's calls load neither ingest/ nor what only writers need."""
    program = f"""
import sys
import ctmirror
from ctmirror import Mirror
with Mirror({str(sample_warehouse)!r}) as m:
    m.search_trials("pembrolizumab", "cancer")
    m.detect_whitespace("semaglutide", "NASH")
    m.get_landscape("asthma", date_before="2018-01-01", holdout="first_posted")
    m.get_landscape("asthma", date_before="2012-03-04")
    m.get_terminated("cancer")
    m.get_trial_details("NCT00711542")
    m.search(condition="asthma")
    m.stats("stats_by_phase", condition="asthma")
    m.sql("SELECT count(*) FROM studies")
write_side = ("ingest", "msgspec", "zstandard", "typer", "tqdm", "httpx")
loaded = sorted(k for k in sys.modules if k.split(".")[0] in write_side)
print(",".join(loaded))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
