"""Documentation is tested: every catalog view and column is documented, the generated pages of docs/ match what
they describe, README is for users and its commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctmirror import Mirror
from ctmirror.docs import pages

ROOT = Path(__file__).resolve().parent.parent


def test_every_view_and_column_is_documented(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        views = m.rows("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'")
        columns = m.rows("SELECT table_name, column_name FROM duckdb_columns() c JOIN duckdb_views() v "
                         "ON c.table_name = v.view_name WHERE NOT v.internal AND c.comment IS NULL")
    assert len(views) >= 15
    assert [v["view_name"] for v in views if not v["comment"]] == []
    assert columns == []


@pytest.mark.parametrize("page", ["data-model.md", "statistics.md", "cli.md"])
def test_the_generated_reference_pages_are_current(sample_warehouse, page):
    with Mirror(sample_warehouse) as m:
        generated = pages(m)[page]
    assert (ROOT / "docs" / page).read_text(encoding="utf-8") == generated, (
        f"docs/{page} is stale: regenerate with `python -m ctmirror.docs WAREHOUSE`")


def test_readme_is_for_users_and_its_links_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme) <= 15_000
    assert "source .venv/bin/activate" in readme  # the first session says how ctmirror gets on the PATH
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", document.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://")):
                assert (document.parent / target).exists(), f"{document.name} links to {target}, which is missing"


def test_docs_label_figures_by_date_and_commit_only():
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]:
        assert not re.search(r"\bsession \d", document.read_text(encoding="utf-8"), re.IGNORECASE), document.name


def test_ci_runs_readme_commands():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    setup = re.findall(r"```bash\n(.*?)```", readme, re.S)[0]
    for command in [line.strip() for line in setup.splitlines() if line.strip() and not line.startswith("#")]:
        assert command in ci, f"CI does not run README's set-up command: {command}"
