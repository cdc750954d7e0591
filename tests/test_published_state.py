"""A warehouse outlives a release: a state published by an earlier ctmirror (tests/data/published-state.tar.zst, a
fixture) is read as it is while the SQL of its tables and views is this version's, with this version's macros where
only they changed; a state whose tables another version's SQL made is refused with the way out.

When a change to the SQL of the catalog's tables (sql/ but serve, calls, catalog, methods, stats) makes the first
test fail, every warehouse published before it needs `ctmirror republish`: say so in the change's notes, then make
the fixture again with `python tests/test_published_state.py`."""

from __future__ import annotations

import io
import sys
import tarfile
import tempfile
from pathlib import Path

import duckdb
import pytest
import zstandard
from conftest import DATA, sample_records, write_ndjson

from ctmirror import Mirror
from ctmirror.core.errors import WarehouseError
from ctmirror.core.warehouse import Warehouse
from ingest.loader import load_paths

FIXTURE = DATA / "published-state.tar.zst"
FIXTURE_STUDIES = 12


def make_fixture() -> None:
    """The fixture: a warehouse of the sample's first studies, published by this version, without raw/."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "w"
        load_paths(Warehouse(root), [write_ndjson(Path(folder) / "a.ndjson", sample_records()[:FIXTURE_STUDIES])])
        packed = io.BytesIO()
        with tarfile.open(fileobj=packed, mode="w") as tar:
            tar.add(root, arcname="w", filter=lambda info: None if info.name.startswith("w/raw") else info)
        FIXTURE.write_bytes(zstandard.ZstdCompressor(level=19).compress(packed.getvalue()))


def unpacked(folder: Path) -> Path:
    with tarfile.open(fileobj=io.BytesIO(zstandard.ZstdDecompressor().decompress(FIXTURE.read_bytes())),
                      mode="r") as tar:
        tar.extractall(folder, filter="tar")
    return folder / "w"


def _answers(m: Mirror, nct_ids: list[str], condition: str) -> list:
    return [*(m.get_trial(nct_id) for nct_id in nct_ids), *(m.get_trial_details(nct_id) for nct_id in nct_ids),
            m.get_landscape(condition), m.get_terminated(condition), m.search_trials("placebo", condition),
            m.detect_whitespace("placebo", condition), m.search(condition=condition).model_dump(exclude={"pagination"}),
            m.stats_by_status(condition=condition)]


@pytest.mark.slow  # builds a warehouse to compare with
def test_a_state_an_earlier_release_published_reads_as_a_new_one(tmp_path, records):
    try:
        old = Mirror(unpacked(tmp_path / "old"))
    except WarehouseError as refused:
        pytest.fail(f"{refused}: the SQL of the catalog's tables changed, so every warehouse published before "
                    "needs `ctmirror republish`; if that is meant, say so in the change's notes and make the fixture "
                    "again: python tests/test_published_state.py")
    root = tmp_path / "new"
    load_paths(Warehouse(root), [write_ndjson(tmp_path / "a.ndjson", records[:FIXTURE_STUDIES])])
    with old, Mirror(root) as new:
        nct_ids = [row["nct_id"] for row in new.rows("SELECT nct_id FROM studies ORDER BY nct_id")]
        condition = new.rows("SELECT condition FROM conditions ORDER BY nct_id, ordinal LIMIT 1")[0]["condition"]
        assert len(nct_ids) == FIXTURE_STUDIES
        assert _answers(old, nct_ids, condition) == _answers(new, nct_ids, condition)


def test_a_state_whose_macros_alone_are_another_versions_is_read_with_this_versions(tmp_path):
    root = unpacked(tmp_path)
    with Mirror(root) as m:
        condition = m.rows("SELECT condition FROM conditions ORDER BY nct_id, ordinal LIMIT 1")[0]["condition"]
        before = m.get_landscape(condition)
    con = duckdb.connect(str(Warehouse(root).state().catalog))
    con.execute("CREATE OR REPLACE MACRO get_landscape_many(conditions, dates_before, as_ofs, top_ns, today := NULL, "
                "current_state := false) AS TABLE SELECT 1 AS k, 'an older version''s' AS broken")
    con.execute("UPDATE catalog_format SET macros_digest = 'an older version''s'")
    con.close()
    with Mirror(root) as m:
        assert m.get_landscape(condition) == before
    plain = duckdb.connect(str(Warehouse(root).state().catalog), read_only=True)  # plain users keep the catalog's
    assert plain.execute("SELECT broken FROM get_landscape_many([], [], [], [])").fetchone()[0] == "an older version's"


def test_a_state_whose_tables_are_another_versions_is_refused_with_the_way_out(tmp_path):
    root = unpacked(tmp_path)
    con = duckdb.connect(str(Warehouse(root).state().catalog))
    con.execute("UPDATE catalog_format SET tables_digest = 'an older version''s'")
    con.close()
    with pytest.raises(WarehouseError, match="published by another version of ctmirror") as refused:
        Mirror(root)
    assert "ctmirror republish" in refused.value.hint


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    make_fixture()
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size:,} bytes)")
