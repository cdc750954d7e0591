"""Documentation is tested: every catalog view and column is documented, README matches the catalog,
and README's commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

from ctmirror import Mirror
from ctmirror.docs import BEGIN, END, data_model_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_every_view_and_column_is_documented(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        views = m.rows("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'")
        columns = m.rows("SELECT table_name, column_name FROM duckdb_columns() c JOIN duckdb_views() v "
                         "ON c.table_name = v.view_name WHERE NOT v.internal AND c.comment IS NULL")
    assert len(views) >= 15
    assert [v["view_name"] for v in views if not v["comment"]] == []
    assert columns == []


def test_readme_data_model_matches_the_catalog(sample_warehouse):
    readme = (ROOT / "README.md").read_text()
    with Mirror(sample_warehouse) as m:
        generated = data_model_markdown(m)
    start, end = readme.index(BEGIN), readme.index(END) + len(END)
    assert readme[start:end] == generated, "README is stale: regenerate with `python -m ctmirror.docs WAREHOUSE`"


def test_readme_statistics_match_the_sql_files():
    from ctmirror.docs import STATS_BEGIN, STATS_END, statistics_markdown

    readme = (ROOT / "README.md").read_text()
    start, end = readme.index(STATS_BEGIN), readme.index(STATS_END) + len(STATS_END)
    assert readme[start:end] == statistics_markdown()


def test_ci_runs_readme_commands():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    setup = re.findall(r"```bash\n(.*?)```", readme, re.S)[0]
    for command in [line.strip() for line in setup.splitlines() if line.strip() and not line.startswith("#")]:
        assert command in ci, f"CI does not run README's set-up command: {command}"
