"""What the tests of a reader's matchers outside the plan share (test_phrase_texts.py, test_phrase_hits.py,
test_word_postings.py): a warehouse whose catalog no other reader holds, and the sample's queries of every kind."""

from __future__ import annotations

import shutil
from pathlib import Path

from ctmirror import Mirror
from ctmirror.core.words import query_norm


def alone(warehouse: Path, folder: Path) -> Path:
    """A copy of the warehouse: a catalog file no other reader of the tests holds (what readers hold whole is
    shared by the file's readers in the process)."""
    return Path(shutil.copytree(warehouse, folder / "warehouse", symlinks=True))


def sample_queries(m: Mirror) -> dict[str, list[str]]:
    """Per field, real texts of the sample as queries (normalised), one in five quoted, with the phrases that
    have synonyms and the drugs that have other names: every kind of phrase the matchers expand."""
    found: dict[str, list[str]] = {}
    for field in ("condition", "intervention"):
        texts = [row["norm"] for row in m.rows(
            "SELECT DISTINCT t.norm FROM search_text AS t JOIN search_hit AS h USING (text_id) "
            "WHERE h.field = $field ORDER BY hash(t.norm) LIMIT 30", {"field": field})]
        found[field] = [f'"{text.strip()}"' if i % 5 == 0 else text for i, text in enumerate(texts)]
    found["condition"] += [row["phrase"] for row in m.rows(
        "SELECT phrase FROM synonym_set WHERE field = 'condition' ORDER BY hash(phrase) LIMIT 15")]
    found["intervention"] += [row["norm"] for row in m.rows(
        "SELECT DISTINCT t.norm FROM intervention_link AS l JOIN search_text AS t USING (text_id) "
        "ORDER BY hash(t.norm) LIMIT 15")]
    found["term"] = found["condition"][:8] + found["intervention"][:8]
    return {field: [query_norm(query) for query in texts] for field, texts in found.items()}


def field_vocabulary(m: Mirror) -> list[str]:
    """Words of the condition's and intervention's areas, common and rare."""
    return [row["token"] for row in m.rows(
        "SELECT token FROM field_token GROUP BY token HAVING count(*) >= 2 ORDER BY count(*) DESC, token LIMIT 400")]


def macro_definitions(m: Mirror, name: str) -> dict[str, str]:
    """A macro's definitions on a reader's connection, by database: "temp" (the reader's) and "catalog"."""
    return {row["database_name"]: row["macro_definition"] for row in m.rows(
        "SELECT database_name, macro_definition FROM duckdb_functions() WHERE function_name = $name",
        {"name": name})}
