"""Words as the matcher splits them: `search_norm` in Python for query words, the same function as the SQL macro
search_norm (sql/schema/helpers.sql) that normalises every stored text at build time. A query's words are
normalised here rather than in SQL: the macro's Unicode tables cost a query about a millisecond to set up each
time it runs, once per query text.

Both read one set of tables, ctmirror/data/word_boundaries.json, written with sql/schema/unicode_text.sql by
`python -m ctmirror.core.words` from Python's Unicode database (run it only to follow a newer Unicode version;
tests/test_unicode_words.py checks the SQL and this module against each other and against NFKC):

- compatibility forms folded one character at a time (NFKC's mappings: fullwidth and halfwidth forms, ligatures,
  super- and subscripts, Roman numerals, enclosed and squared forms, fractions, the micro sign): every mapping to
  one character, and those to several in the blocks trial text uses (Arabic presentation forms and enclosed
  ideographs are left out: hundreds of entries for text the registry does not hold);
- every run of punctuation (P*), separators (Z*), symbols (S*: ° ± × ® ™ ⁄ ∙, arrows, currency), controls and
  the zero-width space as one space, after folding (so '㎎' is 'mg', not a separator); invisible joiners (soft
  hyphen, zero-width joiners, word joiner, BOM) deleted, so 'hyper\u00adtension' stays one word;
- lower case, accents stripped, a plain plural 's' dropped, one space each side;
- after folding, a possessive's apostrophe deleted ("Alzheimer's" is "Alzheimers", so "alzheimer").
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from functools import cache
from pathlib import Path

from ctmirror.core.sqlfiles import sql_root

DATA = Path(__file__).resolve().parent.parent / "data" / "word_boundaries.json"

# Multi-character compatibility mappings kept: the blocks trial text uses.
MULTI_CHARACTER_BLOCKS = [(0x00A0, 0x024F), (0x2070, 0x24FF), (0x3371, 0x33FF), (0xFB00, 0xFB4F),
                          (0xFF00, 0xFFEF), (0x1F100, 0x1F1FF)]
# Marks that join a word's letters when invisible: deleted, not turned into spaces.
INVISIBLE_JOINERS = [0x00AD, 0x200C, 0x200D, 0x2060, 0xFEFF]
# Invisible marks that stand for a word break (the zero-width space): separators though their category is Cf.
INVISIBLE_BREAKS = [0x200B]
# Symbols whose compatibility form would glue letters onto a word ('Drug™' must stay 'drug'): separators instead.
NOT_FOLDED = {0x2122, 0x2120, 0x2121}

_ASCII_SEPARATORS = re.compile(r"[\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F]+")
# The SQL macro possessive_s: an apostrophe between a word's last letter and a final s, ended by an ASCII separator.
_POSSESSIVE = re.compile(r"([^\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F])['’ʼ‘`]s"
                         r"(?=[\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F])")
_PLURAL = re.compile(r"([^\t\n\f\r ]{3})s ")  # RE2's \S: anything but its ASCII \s


# ---- the tables, generated ------------------------------------------------------------------------------------
def _is_separator(code: int) -> bool:
    category = unicodedata.category(chr(code))
    return (category[0] in "PZS" or category == "Cc" or code in INVISIBLE_BREAKS) and code not in INVISIBLE_JOINERS


def _ranges(codes: list[int]) -> list[list[int]]:
    ranges: list[list[int]] = []
    for code in sorted(codes):
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return ranges


def generate_tables() -> dict:
    """The tables from Python's Unicode database."""
    single, several = {}, {}
    for code in range(0x80, 0x110000):
        char = chr(code)
        if unicodedata.category(char) in ("Cs", "Co", "Cn") or code in NOT_FOLDED:
            continue
        folded = unicodedata.normalize("NFKC", char)
        if folded == char or (_is_separator(code) and not any(c.isalnum() for c in folded)):
            continue  # unchanged, or a separator either way
        if len(folded) == 1:
            single[char] = folded
        elif any(low <= code <= high for low, high in MULTI_CHARACTER_BLOCKS) and not folded[0].isspace():
            several[char] = folded
    return {"unicode_version": unicodedata.unidata_version,
            "fold_single": single, "fold_several": several,
            "separators": _ranges([c for c in range(0x110000) if _is_separator(c)]),
            "joiners": _ranges(INVISIBLE_JOINERS)}


def _character_class(ranges: list[list[int]]) -> str:
    """A regular-expression class of code point ranges, as \\x{...} (RE2's and, below, Python's)."""
    return "[" + "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges) + "]"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def render_sql(tables: dict) -> str:
    single, several = tables["fold_single"], tables["fold_several"]
    keys = sorted(several)
    any_folded = _character_class(_ranges([ord(c) for c in (*single, *several)]))
    several_class = _character_class(_ranges([ord(c) for c in several]))
    # Each character looked up by its position in one string of the folded characters: a MAP, or a chain of
    # replace, costs far more to build per row or to plan.
    lookup = (f"array_to_string(list_transform(string_split(s, ''), c -> coalesce("
              f"[{', '.join(_literal(several[c]) for c in keys)}][nullif(instr({_literal(''.join(keys))}, c), 0)], "
              f"c)), '')")
    return f"""-- Generated by `python -m ctmirror.core.words` from Unicode {tables['unicode_version']} (the tables:
-- ctmirror/data/word_boundaries.json); do not edit by hand. That module's docstring says what these do and why.

-- compatibility_fold(s): NFKC's compatibility forms folded one character at a time ('Ｘ' -> 'X', 'ﬁ' -> 'fi',
-- 'Ⅱ' -> 'II', 'µg' -> 'μg', '㎎' -> 'mg'). Text without any is returned after one regular-expression test.
CREATE OR REPLACE MACRO compatibility_fold(s) AS
    CASE WHEN NOT regexp_matches(s, {_literal(any_folded)}) THEN s
         ELSE translate(CASE WHEN regexp_matches(s, {_literal(several_class)}) THEN {lookup} ELSE s END,
                        {_literal(''.join(single))}, {_literal(''.join(single.values()))}) END;

-- word_separators_to_space(s): each run of punctuation, separators, symbols and controls as one space;
-- invisible joiners deleted.
CREATE OR REPLACE MACRO word_separators_to_space(s) AS
    regexp_replace(regexp_replace(s, {_literal(_character_class(tables['joiners']))}, '', 'g'),
                   {_literal(_character_class(tables['separators']) + '+')}, ' ', 'g');
"""


# ---- search_norm in Python --------------------------------------------------------------------------------------
@cache
def _compiled() -> tuple[dict[int, str], re.Pattern[str], re.Pattern[str]]:
    tables = json.loads(DATA.read_text(encoding="utf-8"))
    fold = {ord(c): f for c, f in (*tables["fold_single"].items(), *tables["fold_several"].items())}
    python_class = lambda ranges: "[" + "".join(  # noqa: E731
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges) + "]"
    return fold, re.compile(python_class(tables["joiners"])), re.compile(python_class(tables["separators"]) + "+")


def _strip_accents(text: str) -> str:
    return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", text)
                                                if unicodedata.category(c)[0] != "M"))


def search_norm(text: str) -> str:
    """Text as the matcher compares it: the SQL macro search_norm, in Python (see the module docstring)."""
    if text.isascii():
        spaced = _ASCII_SEPARATORS.sub(" ", _POSSESSIVE.sub(r"\1s", f" {text.lower()} "))
    else:
        fold, joiners, separators = _compiled()
        lowered = "".join(c.lower() for c in _strip_accents(text.translate(fold)))
        spaced = separators.sub(" ", joiners.sub("", _POSSESSIVE.sub(r"\1s", f" {lowered} ")))
    return _PLURAL.sub(r"\1 ", spaced)


_QUOTED = re.compile(r'"[^"]*[^"\s][^"]*"')


def query_norm(text: str) -> str:
    """A query as the matcher takes it: its search_norm; a query written in double quotes is a phrase (its words
    contiguous, never scattered), marked by a leading '"'. The SQL macro query_norm, in Python."""
    stripped = text.strip()
    if _QUOTED.fullmatch(stripped):
        return '"' + search_norm(stripped[1:-1])
    return search_norm(text)


def may_scatter(query: str | None) -> bool:
    """Whether a query as query_norm gives it may match as scattered words: unquoted, of two words or more (the
    matcher's rule, sql/methods/_matching.sql, which also leaves stop words out: this says true of a few queries
    that then scatter nothing, never false of one that would)."""
    return query is not None and not query.startswith('"') and len([w for w in query.split(" ") if w]) >= 2


def main() -> None:
    tables = generate_tables()
    DATA.write_text(json.dumps(tables, ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    sql = sql_root() / "schema" / "unicode_text.sql"
    sql.write_text(render_sql(tables), encoding="utf-8")
    _compiled.cache_clear()
    sys.stdout.write(f"wrote {DATA} and {sql} (Unicode {tables['unicode_version']})\n")


if __name__ == "__main__":
    main()
