"""The records of the studies a page shows, as stored (the registry's JSON as received) and as of a cutoff: read
from each segment's record file by the rows of a page query (PAGE_COLUMNS)."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from ctmirror.core.record_files import RECORDS, record_files_of
from ctmirror.core.sqlfiles import read_sql, sql_literal
from ctmirror.server.records import decode_record, parts_decoder, parts_trie, record_as_of
from ctmirror.server.v2.errors import V2Error

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror

# The columns of a page query's rows (sql/serve/page.sql): where each record is and what a cutoff changes of it.
PAGE_COLUMNS = ("version_no", "nct_id", "content_hash", "overall_status", "why_stopped", "results_posted",
                "results_first_post_date", "enrollment_type", "last_update_post_date", "as_of_exact", "record_file",
                "record_row")


def stored_records(mirror: Mirror, shown: list[dict[str, Any]], as_of: date | None,
                   withheld: list[list[str]] | None = None,
                   paths: list[tuple[str, ...]] | None = None) -> list[dict[str, Any]]:
    """The stored records of the rows shown, in their order, as of the cutoff; `withheld` is given, per record,
    the paths record_as_of left out. paths: only these parts are wanted (a request's `fields`): the rest of each
    record is not decoded, and `withheld` then names only what was left out of them."""
    decode = decode_record if paths is None else parts_decoder(parts_trie(paths), as_of is not None)
    records = []
    for row, text in zip(shown, stored_texts(mirror, shown)):
        out: list[str] = []
        records.append(record_as_of(decode(text), row, as_of, out))
        if withheld is not None:
            withheld.append(out)
    return records


def stored_texts(mirror: Mirror, shown: list[dict[str, Any]]) -> list[bytes | str]:
    """The records of the rows shown as received (JSON text), in their order: each from its segment's record file
    (study_version.record_file and record_row); where there is none (a snapshot an older ctmirror made), from the
    Parquet file holding it, by literal NCT IDs, so a lookup reads a row group or two, not every segment."""
    files = record_files_of(mirror.warehouse.root)
    texts: list[bytes | str | None] = [files.read(row["record_file"], row["record_row"]) for row in shown]
    raw: dict[tuple[str, str], str] = {}
    by_file: dict[str, set[str]] = {}
    for row, text in zip(shown, texts):
        if text is not None:
            continue
        if not STORED_NCT_ID.fullmatch(row["nct_id"]):
            raise V2Error(f"unexpected NCT ID {row['nct_id']!r} in the warehouse", status=500)
        by_file.setdefault(row["record_file"], set()).add(row["nct_id"])
    for file, ids in by_file.items():
        path = sql_literal(str(mirror.warehouse.root.resolve() / file))
        query = (read_sql("serve/queries.sql", "records").replace("{file}", path)
                 .replace("{nct_ids}", ", ".join(sql_literal(i) for i in sorted(ids))))
        try:
            raw.update({(n, h): text for n, h, text in mirror.con.execute(query).fetchall()})
        except duckdb.BinderException as exc:  # a segment keeps its records in its record file alone
            raise V2Error(f"{Path(file).parent} has lost its record file ({RECORDS}): run `ctmirror rebuild`, "
                          f"which writes it again from raw/", status=500) from exc
    return [raw[(row["nct_id"], row["content_hash"])] if text is None else text for row, text in zip(shown, texts)]


STORED_NCT_ID = re.compile(r"NCT\d{8}")
