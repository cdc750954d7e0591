"""Word boundaries for all of Unicode: search_norm splits at every punctuation, separator and symbol of any
script and folds compatibility forms (NFKC) before matching, on real records and on constructed text covering
each class. The SQL is checked against Python's own Unicode database, character by character."""

from __future__ import annotations

import copy
import json
import unicodedata

import pyarrow as pa
import pytest
from conftest import write_ndjson

from ctmirror import Mirror
from ctmirror.core import words
from ctmirror.core.duck import new_connection
from ctmirror.core.warehouse import Warehouse
from ingest.loader import load_paths


@pytest.fixture(scope="module")
def con():
    connection = new_connection()
    yield connection
    connection.close()


def norm(con, text: str) -> str:
    return con.execute("SELECT search_norm(?)", [text]).fetchone()[0]


@pytest.mark.parametrize("text", [
    "X，Y", "X、Y", "X。Y", "X；Y", "X：Y",  # fullwidth and ideographic punctuation
    "X–Y", "X—Y", "X‒Y", "X―Y", "X‐Y",  # en, em, figure and horizontal dashes, the Unicode hyphen
    "X\u00a0Y", "X\u2009Y", "X\u202fY", "X\u3000Y", "X\u2028Y", "X\u200bY",  # spaces, separators, zero width
    "X·Y", "X・Y", "X‧Y", "X•Y", "X∙Y",  # middle dots and bullets
    "X／Y", "X⁄Y", "X∕Y", "X＼Y",  # slashes of every kind
    "（X）Y", "【X】Y", "「X」Y", "《X》Y", "⟨X⟩Y", "⁅X⁆Y", "﴾X﴿Y",  # brackets of several scripts
    "X®Y", "X™Y", "X±Y", "X≥Y", "X→Y", "X€Y",  # symbols between words
])
def test_every_class_of_punctuation_separator_and_symbol_splits_words(con, text):
    assert norm(con, text) == " x y "


@pytest.mark.parametrize(("text", "folded"), [
    ("ＡＳＰＩＲＩＮ", " aspirin "),  # fullwidth letters
    ("ﾃｽﾄ", " テスト "),  # halfwidth katakana
    ("ﬁbrosis", " fibrosi "),  # ligature (and the plural rule after it)
    ("Phase Ⅱ", " phase ii "), ("Phase ⅲ", " phase iii "),  # Roman numerals
    ("5 ㎎", " 5 mg "), ("10 ㎖", " 10 ml "),  # squared units
    ("kg/m²", " kg m2 "), ("H₂O", " h2o "),  # super- and subscripts
    ("500 µg", " 500 μg "),  # the micro sign is the Greek letter mu
    ("①", " 1 "), ("№ 17", " no 17 "),  # enclosed and letterlike forms
    ("Café Peyronie´s", " cafe peyronie s "),  # accents stripped as before; an acute accent separates
    ("hyper\u00adtension", " hypertension "),  # a soft hyphen joins
    ("Viagra™", " viagra "),  # a trademark sign does not glue 'TM' onto the name
])
def test_compatibility_forms_fold_before_matching(con, text, folded):
    assert norm(con, text) == folded


@pytest.mark.parametrize(("text", "normalised"), [
    ("Alzheimer's Disease", " alzheimer disease "), ("Alzheimer’s disease", " alzheimer disease "),
    ("ALZHEIMER'S", " alzheimer "), ("Alzheimers Disease", " alzheimer disease "),  # one text, as the MeSH heading
    ("Crohn's disease", " crohn disease "), ("Sjögren’s syndrome", " sjogren syndrome "),
    ("Hodgkin's/Non-Hodgkin's", " hodgkin non hodgkin "), ("Down's syndrome", " down syndrome "),
    ("Graves' disease", " grave disease "), ("Graves disease", " grave disease "),  # a plural's apostrophe
    ("O'Brien", " o brien "), ("rock'n'roll", " rock n roll "),  # other apostrophes separate words
    ("ＣＲＯＨＮ'Ｓ", " crohn "), ("Crohn\u00ad's", " crohn "),  # after folding, before joiners go
    ("'s", " s "), ("ab's", " abs "), ("1's", " 1s "),  # the plural rule needs three letters before the s
])
def test_a_possessive_is_its_word(con, text, normalised):
    assert norm(con, text) == normalised == words.search_norm(text)


def test_ascii_text_reads_as_before(con):
    assert norm(con, "Non-Alcoholic Steatohepatitis (NASH); Type-2 diabetes") == \
        " non alcoholic steatohepatiti nash type 2 diabete "


def test_every_separator_code_point_splits_and_every_folded_one_matches_its_nfkc_form(con):
    """The generated SQL against Python's Unicode database, for every code point of the Basic Multilingual
    Plane: a punctuation, separator or symbol character splits 'ab' from 'cd' unless it folds to letters,
    and a folded character normalises as its NFKC form does."""
    separators, folded = [], []
    for code in range(0x80, 0x10000):
        char = chr(code)
        category = unicodedata.category(char)
        if category in ("Cs", "Co", "Cn"):
            continue
        nfkc = unicodedata.normalize("NFKC", char)
        if category[0] in "PZS" and not any(c.isalnum() for c in nfkc):
            separators.append(char)
        elif nfkc != char and nfkc.isalnum() and char not in "™℠℡":
            folded.append((char, nfkc))
    not_splitting = con.execute("SELECT list(c) FILTER (WHERE search_norm('ab' || c || 'cd') <> ' ab cd ') "
                                "FROM unnest(?::VARCHAR[]) AS t(c)", [separators]).fetchone()[0]
    assert not not_splitting, [f"U+{ord(c):04X}" for c in not_splitting[:20]]
    assert len(separators) > 700 and len(folded) > 1500
    different = con.execute(
        "SELECT list(f.c) FILTER (WHERE search_norm('x ' || f.c || ' y') <> search_norm('x ' || f.n || ' y')) "
        "FROM (SELECT unnest(?::VARCHAR[]) AS c, unnest(?::VARCHAR[]) AS n) AS f",
        [[c for c, _ in folded], [n for _, n in folded]]).fetchone()[0]
    # Multi-character forms outside the blocks trial text uses (Arabic presentation forms, enclosed
    # ideographs) are left unfolded by design: see sql/schema/unicode_text.py.
    left = [c for c in different or [] if len(unicodedata.normalize("NFKC", c)) == 1]
    assert not left, [f"U+{ord(c):04X}" for c in left[:20]]


def test_real_records_match_words_written_with_fullwidth_and_ideographic_commas(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        # NCT05519384's one intervention is 'JK500 cell injection，cyclophosphamide，Fludarabine'.
        for drug in ("cyclophosphamide", "fludarabine", "JK500 cell injection"):
            assert "NCT05519384" in {t.nct_id for t in m.search_trials(drug, "leukemia", max_results=1000)}, drug
        # NCT05914155's condition 'Nephrotic Syndrome，Idiopathic'; NCT06764875's title 'A Phase Ⅲ Study of ...'.
        assert "NCT05914155" in {t.nct_id for t in m.search_trials("rituximab", "idiopathic", max_results=1000)}
        assert "NCT06764875" in {t.nct_id for t in m.search(query="phase iii rilvegostomig").items}


@pytest.mark.slow
def test_constructed_records_match_across_each_class(tmp_path, records_by_id):
    """A real record whose intervention is rewritten with each class of separator and a compatibility form:
    each word of it is found, as the registry splits it."""
    base = records_by_id["NCT05519384"]
    written = {"NCT90000001": "Ａｓｐｉｒｉｎ，Metformin or Placebo", "NCT90000002": "aspirin–metformin",
               "NCT90000003": "aspirin\u00a0／\u3000metformin", "NCT90000004": "【aspirin】・metformin"}
    studies = []
    for nct_id, name in written.items():
        record = copy.deepcopy(base)
        record["protocolSection"]["identificationModule"]["nctId"] = nct_id
        record["protocolSection"]["armsInterventionsModule"]["interventions"][0]["name"] = name
        studies.append(record)
    root = tmp_path / "warehouse"
    load_paths(Warehouse(root), [write_ndjson(tmp_path / "constructed.ndjson", studies)])
    with Mirror(root) as m:
        for drug in ("aspirin", "metformin"):
            found = {t.nct_id for t in m.search_trials(drug, "leukemia", max_results=1000)}
            assert found == set(written), (drug, found)


@pytest.mark.slow
def test_query_words_are_normalised_in_python_exactly_as_the_sql_normalises_stored_text(con, records):
    """Query words are normalised in Python (ctmirror.core.words), stored texts by the SQL macro: the two agree
    on every code point of the Basic Multilingual Plane, alone and between letters, and on every text of a quarter
    of the real sample's records. Code points unassigned in Python's Unicode version may differ (DuckDB's is newer)."""
    texts = []
    for code in range(0x10000):
        char = chr(code)
        if unicodedata.category(char) not in ("Cs", "Cn"):
            texts += [char, f"ab{char}cd", f"Ab{char}s "]

    def walk(value):
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for record in records[::4]:  # a quarter of the sample's records: their texts' scripts are the whole sample's
        walk(record)
    texts = list(dict.fromkeys(texts))
    con.register("texts_to_normalise", pa.table({"i": range(len(texts)), "t": texts}))  # no list to bind
    in_sql = con.execute("SELECT list(search_norm(t) ORDER BY i) FROM texts_to_normalise").fetchone()[0]
    differing = [(text, sql) for text, sql in zip(texts, in_sql) if words.search_norm(text) != sql]
    assert not differing, [(t[:40], s[:40], words.search_norm(t)[:40]) for t, s in differing[:10]]
    assert len(texts) > 220_000


def test_the_shipped_tables_are_the_generated_ones():
    """ctmirror/data/word_boundaries.json and sql/schema/unicode_text.sql are what `python -m ctmirror.core.words`
    writes from the Unicode version they name (on another Python's Unicode version, only that they agree)."""
    shipped = json.loads(words.DATA.read_text(encoding="utf-8"))
    sql = (words.sql_root() / "schema" / "unicode_text.sql").read_text(encoding="utf-8")
    assert f"from Unicode {shipped['unicode_version']}" in sql and words.render_sql(shipped) == sql
    if shipped["unicode_version"] == unicodedata.unidata_version:
        assert words.generate_tables() == shipped
