"""The registry's word and concept semantics (docs/methods.md, "How words match") on real records of the sample:
unquoted words may scatter over an area's fields while a quoted phrase may not, a condition finds the studies filed
under a narrower heading than the one it names, an inverted MeSH heading, a brand name finds the generic, a country
by any of its names, and every recorded live answer's studies the sample holds."""

from __future__ import annotations

import csv
import json
from datetime import date
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import duckdb
import pytest

from ctmirror import Mirror
from ctmirror.core.sqlfiles import read_sql, sql_root
from ctmirror.core.words import query_norm, search_norm
from ctmirror.server import essie, v2
from ingest.catalog import BUILT_IN_SYNONYMS

PAGES = Path(__file__).parent / "data" / "pages"


@pytest.fixture(scope="module")
def m(sample_mirror):
    return sample_mirror


def found(m: Mirror, **params: str) -> list[str]:
    """The NCT IDs a /api/v2/studies request finds, in the order served (relevance first), asked for alone as a
    client wanting IDs asks (fields=NCTId: the rest of each record is not read)."""
    page, _ = v2.studies(m, {"fields": "NCTId", **params, "pageSize": "1000"}, None)
    return [s["protocolSection"]["identificationModule"]["nctId"] for s in page["studies"]]


def search_ids(m: Mirror, **kwargs) -> set[str]:
    """Every NCT ID the search method finds, page by page (its contract writes them NCT:…)."""
    ids, cursor = set(), None
    while True:
        page = m.search(page_size=200, cursor=cursor, **kwargs)
        ids.update(item.nct_id.replace("NCT:", "NCT") for item in page.items)
        cursor = page.pagination.cursor
        if cursor is None:
            return ids


def test_unquoted_words_may_scatter_a_quoted_phrase_may_not(m):
    # NCT00572481's condition is "Cancer of the Breast"; NCT03225586's conditions are "Lung Disease" and "Cancer"
    assert "NCT00572481" in found(m, **{"query.cond": "breast cancer"})
    assert "NCT00572481" not in found(m, **{"query.cond": '"breast cancer"'})
    assert "NCT03225586" in found(m, **{"query.cond": "lung cancer"})
    assert "NCT03225586" not in found(m, **{"query.cond": '"lung cancer"'})
    # the methods read the words so too: the contract's condition is query.cond
    assert "NCT00572481" in search_ids(m, condition="breast cancer")
    assert "NCT00572481" not in search_ids(m, condition='"breast cancer"')
    # AREA[Condition] holds its words within that area: NCT03225586's two conditions hold both
    assert "NCT03225586" in found(m, **{"query.cond": "AREA[Condition](lung cancer)"})
    assert "NCT03099174" not in found(m, **{"query.cond": "AREA[Condition](lung cancer)"})
    # an operator applies to the whole search term after it, as Essie defines a term: every bare word up to the next
    # operator, so without parentheses the words stay in that area too
    assert found(m, **{"query.cond": "AREA[Condition]lung cancer"}) == \
        found(m, **{"query.cond": "AREA[Condition](lung cancer)"})
    # a backslash makes an operator a word (\MISSING) and a quote mark a mark, which only separates words (it was
    # a 400: a quote without its closing quote)
    assert found(m, **{"query.term": "\\MISSING"}) == found(m, **{"query.term": "missing"})
    escaped = found(m, **{"query.term": '\\"sleep deprivation\\"'})
    assert escaped and escaped == found(m, **{"query.term": "sleep deprivation"})


def test_a_phrase_in_the_condition_ranks_above_scattered_words(m):
    ranked = found(m, **{"query.cond": "lung cancer"})
    phrase_in_condition = set(m.sql(
        "SELECT DISTINCT nct_id FROM search_terms WHERE area = 'Condition' AND contains(norm, ' lung cancer ')"
    )["nct_id"].to_list())
    scattered_only = set(ranked) - set(found(m, **{"query.cond": '"lung cancer"'}))
    assert phrase_in_condition and scattered_only
    last_phrase = max(ranked.index(n) for n in phrase_in_condition if n in ranked)
    assert last_phrase < min(ranked.index(n) for n in scattered_only)


def test_get_terminated_finds_the_stopped_trials_the_matcher_over_every_version_finds(m):
    # get_terminated reads stopped_word and stopped_hit: search_word's and search_hit's rows of stopped_card's
    # versions (in the condition's and intervention's fields), no more and no fewer (they are built beside
    # stopped_card, from the same spans' statuses)
    for table, rows in (("stopped_word", "search_word"), ("stopped_hit", "search_hit")):
        restricted = (f"FROM {rows} WHERE field IN ('condition', 'intervention') "
                      "AND version_no IN (SELECT version_no FROM stopped_card)")
        assert m.rows(f"SELECT count(*) AS n FROM ({restricted})")[0]["n"] > 0
        for left, right in ((restricted, f"FROM {table}"), (f"FROM {table}", restricted)):
            assert m.rows(f"SELECT count(*) AS n FROM ({left} EXCEPT ALL {right})")[0]["n"] == 0, table
    # so its trials are the stopped ones the matcher over every version finds, scattered words included: the
    # conditions' words in another order find them only so
    queries = ["Dysfunction Erectile", "Disease Artery Coronary", "Tumor Breast", "breast cancer", "cancer"]
    every_version = m.rows(
        "SELECT k, v.nct_id FROM (SELECT k, version_no FROM field_hits_many('condition', $qs, $as_ofs) UNION "
        "SELECT k, version_no FROM field_hits_many('intervention', $qs, $as_ofs)) JOIN study_version AS v "
        "USING (version_no) JOIN studies AS s USING (nct_id) WHERE v.is_current AND is_stopped(s.overall_status)",
        {"qs": [query_norm(q) for q in queries], "as_ofs": [None] * len(queries)})
    for k, query in enumerate(queries, 1):
        terminated = {t.nct_id for t in m.get_terminated(query, max_results=10_000)}
        assert terminated == {r["nct_id"] for r in every_version if r["k"] == k}, query
        if query[0].isupper():
            assert terminated and not m.get_terminated(f'"{query}"', max_results=10_000), query


def test_the_counting_matcher_finds_the_versions_the_ranking_matcher_finds(m):
    # field_studies_many (whitespace's, the landscape's and the statistics' matcher) leaves out the texts holding a
    # query's own phrase when its words scatter, whose versions the scattered words find anyway; its synonyms, the
    # headings those texts teach and quoted phrases are read as field_hits_many reads them
    queries = ["breast cancer", '"breast cancer"', "heart attack", "cancer of the breast", "the cancer",
               "type 2 diabetes", "Diabetes Mellitus, Type 2", "asthma", "lung disease", "Keytruda", "insulin glargine"]
    for field in ("condition", "intervention"):
        arguments = {"field": field, "qs": [query_norm(q) for q in queries], "as_ofs": [None] * len(queries)}
        counted = m.rows("SELECT k, version_no FROM field_studies_many($field, $qs, $as_ofs) ORDER BY ALL", arguments)
        ranked = m.rows("SELECT DISTINCT k, version_no FROM field_hits_many($field, $qs, $as_ofs) ORDER BY ALL",
                        arguments)
        assert counted == ranked, field
        assert {r["k"] for r in counted} >= ({1, 2, 3, 4, 6, 8} if field == "condition" else {10, 11})
    # and the texts it leaves out are the query's own phrase's alone, never a synonym's or a heading's
    skipped = m.rows("SELECT count(*) AS n FROM field_texts_many('condition', $qs, [NULL::DATE], "
                     "skip_scattered := true)", {"qs": [query_norm("breast cancer")]})[0]["n"]
    whole = m.rows("SELECT count(*) AS n FROM field_texts_many('condition', $qs, [NULL::DATE])",
                   {"qs": [query_norm("breast cancer")]})[0]["n"]
    assert 0 < skipped < whole


def test_scores_looked_up_by_mask_are_the_joined_scores(m):
    # field_hits_many scores a condition's and an intervention's versions from a list by area mask (scores_by_mask);
    # joined to the mask scores' tables (as search_trials' drug side asks, and BasicSearch always), the same scores
    queries = ["breast cancer", '"breast cancer"', "heart attack", "asthma", "insulin glargine", "Keytruda",
               "lung disease", "tadalafil"]
    for field in ("condition", "intervention"):
        arguments = {"field": field, "qs": [query_norm(q) for q in queries], "as_ofs": [None] * len(queries)}
        looked_up = m.rows("SELECT * FROM field_hits_many($field, $qs, $as_ofs) ORDER BY ALL", arguments)
        joined = m.rows("SELECT * FROM field_hits_many($field, $qs, $as_ofs, scores_joined := true) ORDER BY ALL",
                        arguments)
        assert looked_up == joined and len({r["score"] for r in looked_up}) > 3, field


def test_query_outcs_leaf_finds_what_normalising_every_outcome_finds(m):
    """query.outc's leaf reads each version's outcome texts as normalised once at publish (outcome_text): the
    versions with an outcome whose measure or description, normalised at the call, holds the words."""
    for phrase in ("overall survival", "HbA1c", "x"):
        leaf = {row[0] for row in m.con.execute(read_sql("serve/outcome_leaf.sql"), {"phrase": phrase}).fetchall()}
        wanted = {r["version_no"] for r in m.rows(
            "SELECT DISTINCT v.version_no FROM all_outcomes AS o JOIN study_version AS v USING (nct_id, content_hash) "
            "WHERE contains(search_norm(o.measure), search_norm($p)) OR contains(search_norm(o.description), "
            "search_norm($p))", {"p": phrase})}
        assert wanted and leaf == wanted, phrase


def test_a_possessive_finds_the_heading_written_without_it(m):
    # NCT03058679 and NCT05633706 name "Crohn Disease" alone; NCT03945968 writes "Alzheimer's Disease", the others
    # "Alzheimer Disease" (the MeSH heading, which every one of them is filed under)
    for possessive, plain, written_so in [("Crohn's disease", "Crohn disease", {"NCT03058679", "NCT05633706"}),
                                          ("Alzheimer’s disease", "Alzheimer disease", {"NCT03899298", "NCT03945968"})]:
        found_by_possessive = set(found(m, **{"query.cond": possessive}))
        assert written_so <= found_by_possessive == set(found(m, **{"query.cond": plain})), possessive
        assert written_so <= search_ids(m, condition=possessive)
        assert written_so <= set(found(m, **{"query.cond": f'"{possessive}"'}))  # as a phrase too


def test_a_condition_finds_the_studies_filed_under_narrower_headings(m):
    # "Pulmonary Disorder" is filed under the heading Lung Diseases by the registry (condition_link); NCT00258583
    # is filed under Lung Diseases, Interstitial, whose ancestor Lung Diseases is: no text of it holds the words
    assert m.sql("SELECT count(*) FROM search_terms WHERE nct_id = 'NCT00258583' AND contains(norm, ' disorder ')"
                 ).item() == 0
    assert "NCT00258583" in found(m, **{"query.cond": "pulmonary disorder"})
    assert "NCT00258583" not in found(m, **{"query.cond": "EXPANSION[None](pulmonary disorder)"})
    assert "NCT00258583" in search_ids(m, condition="pulmonary disorder")


def test_an_inverted_heading_is_found_by_its_natural_order(m):
    # NCT05932303 holds "Lung Diseases, Interstitial" as an ancestor term only (the live API found it for this
    # recorded query: tests/data/pages/ruhruh66-...)
    assert "NCT05932303" in found(m, **{"query.cond": "interstitial lung disease"})
    assert "NCT05932303" not in found(m, **{"query.cond": "EXPANSION[None](interstitial lung disease)"})


def test_a_brand_name_finds_studies_that_name_only_the_generic(m):
    # NCT05431270 lists "Pembrolizumab + Carboplatin + Pemetrexed" with no other names and no intervention MeSH
    # term; other records teach that Keytruda is pembrolizumab (intervention_link)
    assert not m.sql("SELECT * FROM interventions WHERE nct_id = 'NCT05431270' AND len(other_names) > 0").height
    assert "NCT05431270" in found(m, **{"query.intr": '"Keytruda"'})
    assert "NCT05431270" in found(m, **{"query.intr": "Keytruda"})
    assert "NCT05431270" not in found(m, **{"query.intr": "EXPANSION[None]Keytruda"})
    assert "NCT05431270" in search_ids(m, intervention="Keytruda")
    taught = {row["phrase"]: row for row in m.expansions("Keytruda", "intervention")}
    assert taught["pembrolizumab"]["kind"] == "other name" and taught["pembrolizumab"]["teaching_studies"] >= 2


def test_generic_names_teach_no_links(m):
    linked = m.sql("""SELECT DISTINCT x.norm FROM intervention_link AS l
                      JOIN search_text AS x ON x.text_id IN (l.text_id, l.term_text_id)""")["norm"].to_list()
    assert linked and not [n for n in linked if n.strip() in ("placebo", "saline", "standard of care")]
    # a placebo's other names ("sugar pill") never find a drug
    assert m.expansions("placebo", "intervention") == []


def test_a_country_is_found_by_any_of_its_names(m):
    korea = set(found(m, **{"query.locn": "Korea, Republic of"}))
    assert korea and korea == set(found(m, **{"query.locn": "South Korea"}))
    written = m.sql("SELECT DISTINCT nct_id, country FROM locations WHERE country IN ('South Korea', "
                    "'Korea, Republic of') ORDER BY ALL").rows()
    assert {country for _, country in written} == {"South Korea", "Korea, Republic of"}
    assert {nct_id for nct_id, _ in written} <= korea
    # the recorded case's shape: filter.ids with query.locn, and query.cond with query.locn and a status
    for nct_id, country in written[:3]:
        other = "South Korea" if country != "South Korea" else "Korea, Republic of"
        assert found(m, **{"filter.ids": nct_id, "query.locn": other}) == [nct_id]
        status = m.sql("SELECT overall_status FROM studies WHERE nct_id = $n", {"n": nct_id}).item()
        condition = m.sql("SELECT condition FROM conditions WHERE nct_id = $n LIMIT 1", {"n": nct_id}).item()
        assert nct_id in found(m, **{"query.cond": condition, "query.locn": other, "filter.overallStatus": status})
    assert set(found(m, **{"query.locn": "USA"})) == set(found(m, **{"query.locn": "United States"}))
    # a place's parts are whole words: 'Bost' is no city
    assert found(m, **{"query.locn": "Bost"}) == []


def test_a_site_is_found_by_its_facility_and_zip_code_as_locationsearch_finds_it(m, records):
    # LocationSearch reads a site's facility and ZIP code besides its city, state and country; search's `location`
    # too. Comma-separated parts are one site's: Mayo Clinic in Rochester, not a Mayo Clinic and a Rochester apart
    def with_site(test) -> set[str]:
        return {r["protocolSection"]["identificationModule"]["nctId"] for r in records
                if any(test(site) for site in r["protocolSection"].get("contactsLocationsModule", {})
                       .get("locations", []))}

    mayo = with_site(lambda x: "mayo clinic" in (x.get("facility") or "").lower())
    mayo_rochester = with_site(lambda x: "mayo clinic" in (x.get("facility") or "").lower()
                               and x.get("city") == "Rochester")
    zip_code = with_site(lambda x: (x.get("zip") or "").split("-")[0] == "55905")  # ZIP+4 too
    assert len(mayo_rochester) > 10 and mayo_rochester < mayo and zip_code
    assert set(found(m, **{"query.locn": "Mayo Clinic"})) == mayo
    assert set(found(m, **{"query.locn": "Mayo Clinic, Rochester"})) == mayo_rochester
    assert set(found(m, **{"query.locn": "55905"})) == zip_code
    assert search_ids(m, location="Mayo Clinic, Rochester") == mayo_rochester
    assert set(found(m, **{"query.term": "SEARCH[Location](AREA[LocationFacility]Mayo Clinic AND "
                                         "AREA[LocationCity]Rochester)"})) == mayo_rochester
    assert set(found(m, **{"filter.advanced": "AREA[LocationZip]55905"})) == zip_code


def test_every_recorded_live_answer_is_found_whole(m):
    """Recall 100%: for each recorded live search page (tests/data/pages), every recorded study the sample holds
    is in the served answer to the same request."""
    held = set(m.sql("SELECT nct_id FROM studies")["nct_id"].to_list())
    checked = 0
    for path in sorted(PAGES.glob("*.json")):
        recorded = json.loads(path.read_text())
        uri = recorded["_source"]["request_uri"].split(" ")[0]
        if "/api/v2/studies?" not in uri or "pageToken" in uri:
            continue
        params = {k: v for k, v in parse_qsl(urlsplit(uri).query) if k not in ("fields", "pageSize", "countTotal")}
        ours = set(found(m, **params))
        wanted = [s["protocolSection"]["identificationModule"]["nctId"] for s in recorded["response"]["studies"]]
        missing = [n for n in wanted if n in held and n not in ours]
        assert missing == [], (path.name, params)
        checked += sum(n in held for n in wanted)
    assert checked >= 20


def test_expansion_levels_parse():
    tree = essie.parse("EXPANSION[Concept](heart attack) OR EXPANSION[none]MI")
    assert tree == essie.Or((essie.Expansion("concept", essie.Words("heart attack")),
                             essie.Expansion("none", essie.Words("MI"))))
    with pytest.raises(essie.EssieError):
        essie.parse("EXPANSION[Everything]x")


@pytest.mark.parametrize("text", ['"lung cancer"', ' "Lung  Cancer" ', "lung cancer", '"', '""', '" "',
                                  'a "quoted" word', '"Crohn\'s disease"', '"Sjögren"'])
def test_query_norm_is_one_rule_in_python_and_sql(text):
    con = duckdb.connect()
    for name in ("schema/unicode_text.sql", "schema/helpers.sql", "schema/words.sql"):
        con.execute(read_sql(name))
    assert con.execute("SELECT query_norm($t)", {"t": text}).fetchone()[0] == query_norm(text)


def test_a_wildcard_finds_every_word_it_begins_and_a_boost_reorders_only(m):
    diabetes = set(found(m, **{"query.cond": "diabetes"}))
    prefixed = set(found(m, **{"query.cond": "diabet*"}))
    # "diabetic" alone in some studies' condition texts: found by the prefix, not by the word
    assert diabetes < prefixed
    assert m.sql("SELECT count(*) FROM search_terms WHERE nct_id IN (SELECT unnest($ids)) AND contains(norm, "
                 "' diabetic ')", {"ids": sorted(prefixed - diabetes)}).item() > 0
    plain = found(m, **{"query.cond": "diabetes OR obesity"})
    boosted = found(m, **{"query.cond": "diabetes^3 OR obesity"})
    assert set(plain) == set(boosted) and plain != boosted
    for refused in ("di*", "AREA[LocationCity]bost*", "^2 asthma", "asthma^0"):
        with pytest.raises(v2.V2Error):
            found(m, **{"query.cond": refused})


@pytest.mark.slow  # reads every version's stored descriptions
def test_design_intervention_type_and_description_areas(m):
    def truth(query: str) -> set[str]:
        return set(m.sql(query)["nct_id"].to_list())

    assert set(found(m, **{"filter.advanced": "AREA[DesignAllocation]RANDOMIZED"})) == truth(
        "SELECT nct_id FROM studies WHERE allocation = 'RANDOMIZED'")
    assert set(found(m, **{"filter.advanced": "AREA[InterventionType]\"Dietary Supplement\""})) == truth(
        "SELECT DISTINCT nct_id FROM interventions WHERE intervention_type_code = 'DIETARY_SUPPLEMENT'")
    masked = found(m, **{"filter.advanced": "AREA[DesignMasking]QUADRUPLE AND AREA[DesignPrimaryPurpose]PREVENTION"})
    assert masked and set(masked) == truth(
        "SELECT nct_id FROM studies WHERE masking = 'QUADRUPLE' AND primary_purpose = 'PREVENTION'")
    described = set(found(m, **{"filter.advanced": "AREA[DetailedDescription](controlled placebo)"}))
    assert described and described == truth(
        "SELECT nct_id FROM studies WHERE contains(search_norm(detailed_description), ' placebo ') "
        "AND contains(search_norm(detailed_description), ' controlled ')")


def test_a_word_finds_its_plural_in_ies_and_back(m):
    # search_norm drops a plain plural 's' ("diseases"); "therapies" is stored as "therapie", which word_variants
    # joins to "therapy"
    plural = m.sql("SELECT DISTINCT nct_id FROM search_terms WHERE area = 'Condition' "
                   "AND contains(norm, ' cardiomyopathie ') AND NOT contains(norm, ' cardiomyopathy ')")
    assert plural.height > 0
    singular = set(found(m, **{"query.cond": "cardiomyopathy"}))
    assert set(plural["nct_id"].to_list()) <= singular == set(found(m, **{"query.cond": "cardiomyopathies"}))
    assert set(found(m, **{"query.term": "biopsy"})) == set(found(m, **{"query.term": "biopsies"}))


def test_british_and_american_spellings_and_roman_numerals_find_each_other(m):
    # "tumour" and "tumor", "type II" and "type 2": studies holding one spelling alone are found by the other
    areas = "('Condition', 'BriefTitle', 'OfficialTitle', 'Keyword', 'ConditionMeshTerm', 'ConditionAncestorTerm')"
    for one, other, word, twin in [("tumour", "tumor", "tumour", "tumor"),
                                   ("leukaemia", "leukemia", "leukaemia", "leukemia"),
                                   ("paediatric", "pediatric", "paediatric", "pediatric"),
                                   ("type ii diabetes", "type 2 diabetes", "ii", "2"),
                                   ("stage iv", "stage 4", "iv", "4")]:
        alone = {}
        for held, missing in ((word, twin), (twin, word)):
            alone[held] = set(m.sql(f"SELECT DISTINCT nct_id FROM search_terms WHERE area IN {areas} "
                                    "AND contains(norm, $held) AND NOT contains(norm, $missing)",
                                    {"held": f" {held} ", "missing": f" {missing} "})["nct_id"].to_list())
            assert alone[held], held
        by_one = set(found(m, **{"query.cond": one}))
        assert by_one == set(found(m, **{"query.cond": other})), (one, other)
        if one == word:  # a one-word query: every study holding either spelling
            assert alone[word] | alone[twin] <= by_one
        # and as a quoted phrase, contiguous
        assert set(found(m, **{"query.cond": f'"{one}"'})) == set(found(m, **{"query.cond": f'"{other}"'}))
    assert len(set(found(m, **{"query.cond": '"type ii diabetes"'}))) > 100  # 17 before the twins


def test_a_drug_finds_its_other_nonproprietary_name(m):
    # the sample's paracetamol study (NCT05742711) and acetaminophen study (NCT06305754) name the drug one way
    # each; so do its aspirin and acetylsalicylic acid studies (sql/data/synonyms.csv: INN and USAN names)
    for one, other, expected in [("paracetamol", "acetaminophen", {"NCT05742711", "NCT06305754"}),
                                 ("aspirin", "acetylsalicylic acid", {"NCT04307511", "NCT02383771", "NCT03328156"})]:
        by_one = set(found(m, **{"query.intr": one}))
        assert expected <= by_one == set(found(m, **{"query.intr": other}))
        assert expected <= search_ids(m, intervention=one)


def filed_under(m: Mirror, heading: str, unless_text: str) -> set[str]:
    """The sample's studies filed under a MeSH heading (as a term or an ancestor) none of whose search texts holds
    unless_text: those only an expansion finds."""
    return set(m.sql("""SELECT DISTINCT nct_id FROM mesh_terms AS t WHERE term = $heading AND NOT EXISTS (
                            SELECT 1 FROM search_terms AS u WHERE u.nct_id = t.nct_id AND contains(u.norm, $text))""",
                     {"heading": heading, "text": search_norm(unless_text)})["nct_id"].to_list())


@pytest.mark.parametrize(("lay", "heading", "least"), [
    ("heart attack", "Myocardial Infarction", 3),
    pytest.param("high blood pressure", "Hypertension", 30, marks=pytest.mark.slow),
    pytest.param("cancer", "Neoplasms", 100, marks=pytest.mark.slow),
    pytest.param("COPD", "Pulmonary Disease, Chronic Obstructive", 1, marks=pytest.mark.slow)])
def test_a_lay_name_finds_the_studies_filed_under_its_mesh_heading(m, lay, heading, least):
    # sql/data/mesh_entry_terms.csv: the sample has no study holding "heart attack", and three filed under
    # Myocardial Infarction; the live API finds them by the heading's entry terms, on every text surface
    only_by_heading = filed_under(m, heading, lay)
    assert len(only_by_heading) >= least
    assert only_by_heading <= set(found(m, **{"query.cond": lay}))
    assert only_by_heading <= set(found(m, **{"query.term": lay}))
    assert only_by_heading <= search_ids(m, condition=lay)
    assert not only_by_heading & set(found(m, **{"query.cond": f"EXPANSION[None]({lay})"}))
    assert {"kind": "synonym", "phrase": search_norm(heading).strip(), "source": heading}.items() in [
        {k: row[k] for k in ("kind", "phrase", "source")}.items() for row in m.expansions(lay, "condition")]


def test_a_brand_name_or_code_finds_the_generic_without_any_record_teaching_it(m):
    # sql/data/drug_names.csv: no sample record names Rybelsus, Tecentriq, Mounjaro, Zepbound or Kesimpta, nor MPDL3280A
    # (atezolizumab's development code), where query.intr looks (one summary names Rybelsus); other records
    # teach Ozempic and Wegovy, as other names of semaglutide
    unnamed = m.sql("SELECT * FROM search_terms WHERE regexp_matches(norm, ' (rybelsu|tecentriq|mounjaro|zepbound"
                    "|mpdl3280a|kesimpta) ') AND area <> 'BriefSummary'")
    assert not unnamed.height
    for generic, names in [("semaglutide", ("Rybelsus", "Ozempic", "Wegovy")), ("atezolizumab", ("Tecentriq",
                            "MPDL3280A")), ("tirzepatide", ("Mounjaro", "Zepbound")), ("ofatumumab", ("Kesimpta",))]:
        studies = set(found(m, **{"query.intr": generic}))
        assert studies, generic
        for name in names:
            assert set(found(m, **{"query.intr": name})) == studies, name
            assert studies <= search_ids(m, intervention=name)
    assert not found(m, **{"query.intr": "EXPANSION[None]Rybelsus"})


def test_a_drug_class_finds_the_studies_filed_under_its_pharmacological_action(m):
    # sql/data/drug_classes.csv: a drug class by its common name finds the studies whose intervention ancestors
    # hold its MeSH heading (the registry files sildenafil under Phosphodiesterase 5 Inhibitors, pembrolizumab
    # under Immune Checkpoint Inhibitors)
    for name, heading in [("statins", "Hydroxymethylglutaryl-CoA Reductase Inhibitors"),
                          ("checkpoint blockade", "Immune Checkpoint Inhibitors"),
                          ("antibiotics", "Anti-Bacterial Agents"),
                          ("NSAIDs", "Anti-Inflammatory Agents, Non-Steroidal")]:
        filed = set(m.sql("SELECT DISTINCT nct_id FROM mesh_terms WHERE domain = 'intervention' AND term = $t",
                          {"t": heading})["nct_id"].to_list())
        assert filed, heading
        assert filed <= set(found(m, **{"query.intr": name})), name
        assert filed <= search_ids(m, intervention=name), name


def test_query_term_expands_a_drug_or_condition_as_their_own_fields_do(m):
    # BasicSearch's names carry synonyms (the search-areas page marks them): query.term takes the condition's and
    # the intervention's groups and the links the records teach (Keytruda: other names in the sample)
    assert set(found(m, **{"query.term": "Keytruda"})) == set(found(m, **{"query.term": "pembrolizumab"}))
    assert set(found(m, **{"query.intr": "Keytruda"})) <= set(found(m, **{"query.term": "Keytruda"}))
    assert set(found(m, **{"query.term": "Ozempic"})) >= set(found(m, **{"query.intr": "Ozempic"}))
    taught = {row["phrase"]: row["kind"] for row in m.expansions("Keytruda", "term")}
    assert taught["pembrolizumab"] in ("synonym", "other name") and "mk 3475" in taught
    # search's free text is query.term: the same studies, a quoted phrase contiguous there too
    for query in ("Keytruda", "heart attack", '"breast cancer"'):
        assert search_ids(m, query=query) == set(found(m, **{"query.term": query})), query
    assert search_ids(m, query="Keytruda") == search_ids(m, query="pembrolizumab")
    assert search_ids(m, query='"breast cancer"') < search_ids(m, query="breast cancer")


def test_the_built_in_synonym_files_hold_no_ambiguous_or_short_phrase():
    # a condition's or drug's phrase in two groups would join two concepts, and one of fewer than three letters or
    # digits (normalised) finds too much (the thesaurus import's guards: ingest/thesaurus.py); places are matched
    # otherwise (a country's names and codes, sql/methods/_matching.sql)
    owners: dict[tuple[str, str], set[str]] = {}
    for name in BUILT_IN_SYNONYMS:
        with open(sql_root() / "data" / name, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                norm = search_norm(row["phrase"]).strip()
                if row["field"] != "location":
                    assert len(norm.replace(" ", "")) >= 3, (name, row)
                    owners.setdefault((row["field"], norm), set()).add(row["group_name"])
    assert len(owners) > 1_000
    assert not {key: groups for key, groups in owners.items() if len(groups) > 1}
    # query.term reads the condition's and the intervention's groups together
    both = {norm for field, norm in owners if field == "condition"} & \
        {norm for field, norm in owners if field == "intervention"}
    assert not both


def test_query_intr_and_query_term_look_in_their_documented_areas(m):
    # InterventionSearch holds the titles and keywords: NCT05159778 and NCT02513472 name pembrolizumab in their
    # titles alone, NCT01294579 rituximab
    assert {"NCT05159778", "NCT02513472"} <= set(found(m, **{"query.intr": "pembrolizumab"}))
    assert "NCT01294579" in found(m, **{"query.intr": "rituximab"})
    assert {"NCT05159778", "NCT02513472"} <= search_ids(m, intervention="pembrolizumab")
    # ConditionSearch holds the NCT ID (weight 0.2)
    assert found(m, **{"query.cond": "NCT05159778"}) == ["NCT05159778"]
    # SponsorSearch holds the organisation that registered the study: NCT00841061 is NIH's, registered by NICHD
    assert m.sql("SELECT lead_sponsor FROM studies WHERE nct_id = 'NCT00841061'").item() == \
        "National Institutes of Health (NIH)"
    assert "NCT00841061" in found(m, **{"query.spons": "Eunice Kennedy Shriver"})
    assert "NCT00841061" not in found(m, **{"query.lead": "Eunice Kennedy Shriver"})
    # BasicSearch holds the MeSH terms, their ancestors and the arm groups: studies with "neoplasm" in those alone
    only_there = set(m.sql(
        "SELECT DISTINCT nct_id FROM search_terms AS t WHERE area IN ('ConditionAncestorTerm', 'ConditionMeshTerm', "
        "'ArmGroupDescription', 'ArmGroupLabel', 'InterventionMeshTerm', 'InterventionAncestorTerm') "
        "AND contains(norm, ' neoplasm ') AND NOT EXISTS (SELECT 1 FROM search_terms AS u WHERE u.nct_id = t.nct_id "
        "AND u.area IN ('NCTId', 'Acronym', 'BriefTitle', 'OfficialTitle', 'Condition', 'InterventionName', "
        "'InterventionOtherName', 'Keyword', 'BriefSummary') AND contains(u.norm, ' neoplasm '))")["nct_id"].to_list())
    assert len(only_there) > 100
    assert only_there <= set(found(m, **{"query.term": "neoplasms"}))
    # the areas and weights /studies/search-areas documents: InterventionSearch's, as the registry publishes them
    weights = dict(m.con.execute("SELECT area, weight::DOUBLE FROM search_area WHERE field = 'intervention'")
                   .fetchall())
    assert weights == {"InterventionName": 0.95, "InterventionOtherName": 0.75, "BriefTitle": 0.65,
                       "OfficialTitle": 0.6, "ArmGroupLabel": 0.5, "InterventionMeshTerm": 0.5, "Keyword": 0.5,
                       "InterventionAncestorTerm": 0.4, "ArmGroupDescription": 0.4, "InterventionDescription": 0.4,
                       "InterventionType": 0.85, "ArmGroupType": 0.85}


def test_spelling_twins_are_normalised_and_name_each_other(m):
    twins = dict(m.con.execute("SELECT unnest(map_keys(spelling_twins())), unnest(map_values(spelling_twins()))")
                 .fetchall())
    assert len(twins) > 200
    for word, others in twins.items():
        assert query_norm(word).strip() == word and word not in others
        for other in others:
            assert query_norm(other).strip() == other and word in twins[other], (word, other)


@pytest.mark.parametrize("name", ["filter.synonyms", "postFilter.synonyms"])
def test_filter_synonyms_is_refused_by_name_or_ignored_when_empty(m, name):
    with pytest.raises(v2.V2Error, match=f"{name} names the registry's own synonym ids"):
        found(m, **{"query.cond": "asthma", name: "ConditionSearch:1651367"})
    assert found(m, **{"query.cond": "asthma", name: ""}) == found(m, **{"query.cond": "asthma"})


def test_query_id_finds_nct_ids_aliases_and_acronyms(m):
    acronyms = m.sql("SELECT nct_id, acronym FROM studies WHERE acronym IN ('Steno-2', 'AMORE-Eur')").rows()
    assert len(acronyms) == 2
    for nct_id, acronym in acronyms:
        assert nct_id in found(m, **{"query.id": acronym})
        assert nct_id in found(m, **{"query.id": acronym.lower().replace("-", " ")})
    both = found(m, **{"query.id": f"NCT00711542 {acronyms[0][1]}"})
    assert set(both) == {"NCT00711542", acronyms[0][0]}
    assert found(m, **{"query.id": "no-such-acronym"}) == []


def test_query_id_finds_organisation_and_secondary_study_ids(m):
    # NCT02552212: organisation's ID AS0006, a EudraCT number 2015-001894-41 as its secondary ID
    assert found(m, **{"query.id": "AS0006"}) == ["NCT02552212"]
    assert found(m, **{"query.id": "2015-001894-41"}) == ["NCT02552212"]
    assert "NCT00763412" in found(m, **{"query.id": "P60DK020579"})  # a grant number, its secondary ID
    # BasicSearch (query.term) holds them too, below the title's weight; a condition search does not
    assert "NCT02552212" in found(m, **{"query.term": "AS0006"})
    assert "NCT02552212" in found(m, **{"query.term": "AS0006 OR asthma"})
    assert found(m, **{"query.cond": "AS0006"}) == []
    assert found(m, **{"filter.advanced": "AREA[OrgStudyId]AS0006"}) == ["NCT02552212"]
    assert found(m, **{"filter.advanced": "AREA[SecondaryId]AS0006"}) == []
    assert found(m, **{"filter.advanced": "AREA[SecondaryId]2015-001894-41"}) == ["NCT02552212"]


@pytest.mark.slow  # sixteen areas, each a v2 search and a search method's pages
@pytest.mark.parametrize("area", ["Acronym", "BriefSummary", "BriefTitle", "Condition", "InterventionName",
                                  "InterventionOtherName", "Keyword", "OfficialTitle", "NCTId", "LeadSponsorName",
                                  "CollaboratorName", "PrimaryOutcomeMeasure", "SecondaryOutcomeMeasure",
                                  "InterventionDescription", "ArmGroupLabel", "InterventionAncestorTerm"])
def test_query_term_finds_a_study_by_a_text_in_any_one_of_its_areas(m, area):
    # every BasicSearch area counts (areas past the sixteenth of all fields were once lost in the match's packing),
    # those sharing a lane too: a text held in that area alone of all the study's areas
    nct_id, text = m.sql("""
        SELECT t.nct_id, t.norm FROM search_terms AS t
        WHERE t.area = $area AND length(t.norm) BETWEEN 8 AND 60 AND NOT EXISTS (
            SELECT 1 FROM search_terms AS u WHERE u.nct_id = t.nct_id AND u.area <> t.area AND u.norm = t.norm)
        ORDER BY t.nct_id, t.norm LIMIT 1""", {"area": area}).rows()[0]
    assert nct_id in found(m, **{"query.term": f'"{text.strip()}"'})
    assert nct_id in search_ids(m, query=text.strip())


def test_basicsearch_areas_weigh_as_published_and_a_shared_lane_weighs_alike(m):
    # /studies/search-areas' BasicSearch weights; areas of one weight that no AREA[...] reads from the term field
    # share a bit of the match's masks, which counts its weight once
    weights = dict(m.con.execute("SELECT area, weight::DOUBLE FROM search_area WHERE field = 'term'").fetchall())
    assert weights == {"NCTId": 1.0, "Acronym": 1.0, "BriefTitle": 0.89, "OfficialTitle": 0.85, "Condition": 0.81,
                       "InterventionName": 0.8, "InterventionOtherName": 0.75, "Keyword": 0.6,
                       "PrimaryOutcomeMeasure": 0.6, "BriefSummary": 0.6, "ArmGroupLabel": 0.5,
                       "SecondaryOutcomeMeasure": 0.5, "InterventionDescription": 0.45, "ArmGroupDescription": 0.45,
                       "LeadSponsorName": 0.4, "ConditionMeshTerm": 0.3, "InterventionMeshTerm": 0.3,
                       "ConditionAncestorTerm": 0.25, "InterventionAncestorTerm": 0.25, "CollaboratorName": 0.25,
                       "Phase": 0.65, "StdAge": 0.65, "InterventionType": 0.35, "ArmGroupType": 0.35,
                       **dict.fromkeys(("DesignAllocation", "DesignInterventionModel", "DesignMasking",
                                        "DesignWhoMasked", "DesignObservationalModel", "DesignPrimaryPurpose",
                                        "DesignTimePerspective", "StudyType"), 0.3)}
    lanes = m.con.execute("SELECT field, area_id, list(DISTINCT weight), list(area ORDER BY area) FROM search_area "
                          "GROUP BY ALL").fetchall()
    assert all(len(w) == 1 for _, _, w, _ in lanes)
    assert max(area_id for _, area_id, _, _ in lanes) <= 16
    # an area AREA[...] reads from the term field keeps a bit of its own
    own = {areas[0] for field, _, _, areas in lanes if field == "term" and len(areas) == 1}
    assert {"NCTId", "Acronym", "BriefTitle", "OfficialTitle", "BriefSummary"} <= own
    # the score of a combination counts each lane once: a text in Keyword and PrimaryOutcomeMeasure scores 0.6
    keyword_bit = m.con.execute("SELECT 1::UINTEGER << (area_id - 1) FROM search_area "
                                "WHERE field = 'term' AND area = 'Keyword'").fetchone()[0]
    keyword_score = m.con.execute("SELECT score::DOUBLE FROM term_mask_score WHERE area_mask = $1", [keyword_bit])
    assert keyword_score.fetchone()[0] == pytest.approx(0.6)


def test_query_term_finds_a_sponsor_an_outcome_and_an_intervention_description(m):
    # BasicSearch holds the lead sponsor, the collaborators, the primary and secondary outcome measures and the
    # interventions' descriptions: Pfizer leads 40 sample studies, few of which name it elsewhere
    pfizer = set(m.sql("SELECT nct_id FROM studies WHERE contains(search_norm(lead_sponsor), ' pfizer ')")
                 ["nct_id"].to_list())
    assert len(pfizer) >= 30 and pfizer <= set(found(m, **{"query.term": "Pfizer"}))
    assert pfizer <= search_ids(m, query="Pfizer")
    # "overall survival" as scattered words with "breast cancer": the outcome holds two of the four words
    survival = set(m.sql("""SELECT DISTINCT o.nct_id FROM outcomes AS o JOIN conditions AS c USING (nct_id)
                            WHERE o.measure ILIKE '%overall survival%' AND c.condition ILIKE '%breast cancer%'""")
                   ["nct_id"].to_list())
    assert survival and survival <= set(found(m, **{"query.term": "overall survival breast cancer"}))


def _ids_where(records, test) -> set[str]:
    return {r["protocolSection"]["identificationModule"]["nctId"] for r in records if test(r["protocolSection"])}


def _words_in(texts) -> set[str]:
    return set(" ".join(search_norm(t) for t in texts if t).split())


def _intervention_texts(ps: dict) -> list[str]:
    """What InterventionSearch held before its descriptions and types: names, other names, titles, arm groups,
    keywords (the MeSH terms are the derived section's: the callers check them apart)."""
    arms = ps.get("armsInterventionsModule", {})
    ident = ps["identificationModule"]
    return [ident.get("briefTitle"), ident.get("officialTitle"), *ps.get("conditionsModule", {}).get("keywords", []),
            *(i.get("name") for i in arms.get("interventions", [])),
            *(o for i in arms.get("interventions", []) for o in i.get("otherNames", [])),
            *(a.get(k) for a in arms.get("armGroups", []) for k in ("label", "description"))]


def test_query_intr_finds_an_intervention_by_its_description_type_and_arm_type(m, records):
    # InterventionSearch holds the interventions' descriptions (0.4), their types and the arm groups' types (0.85,
    # by the words the registry displays: "Placebo Comparator", "Radiation"), as the registry publishes it
    by_id = {r["protocolSection"]["identificationModule"]["nctId"]: r for r in records}
    placebo_arm = _ids_where(records, lambda ps: any(
        a.get("type") == "PLACEBO_COMPARATOR" for a in ps.get("armsInterventionsModule", {}).get("armGroups", [])))
    silent = {n for n in placebo_arm if "placebo" not in _words_in(_intervention_texts(by_id[n]["protocolSection"]))}
    assert len(silent) >= 10  # placebo arms whose texts never say "placebo"
    assert placebo_arm <= set(found(m, **{"query.intr": "placebo"}))
    assert placebo_arm <= search_ids(m, intervention="placebo comparator")
    radiation = _ids_where(records, lambda ps: any(
        i.get("type") == "RADIATION" for i in ps.get("armsInterventionsModule", {}).get("interventions", [])))
    assert any("radiation" not in _words_in(_intervention_texts(by_id[n]["protocolSection"])) for n in radiation)
    assert radiation <= set(found(m, **{"query.intr": "radiation"}))
    # a drug named in an intervention's description alone: NCT IDs where the description names it and nothing
    # else of InterventionSearch does (the MeSH terms either)
    described = m.sql("""
        SELECT t.nct_id, any_value(t.norm) AS norm FROM search_terms AS t
        WHERE t.area = 'InterventionDescription' AND contains(t.norm, ' prednisone ') AND NOT EXISTS (
            SELECT 1 FROM search_terms AS u WHERE u.nct_id = t.nct_id AND u.area <> 'InterventionDescription'
            AND u.area IN (SELECT area FROM search_area WHERE field = 'intervention')
            AND contains(u.norm, ' prednisone '))
        GROUP BY ALL ORDER BY 1""").rows()
    assert described
    for nct_id, _ in described:
        assert "prednisone" not in _words_in(_intervention_texts(by_id[nct_id]["protocolSection"]))
        assert nct_id in found(m, **{"query.intr": "prednisone"})
        assert nct_id in search_ids(m, intervention="prednisone")
    # AREA[InterventionType] still reads the enumeration itself
    assert set(found(m, **{"query.intr": "AREA[InterventionType]RADIATION"})) == radiation


@pytest.mark.slow  # four enumerations, each against the records, and the search method's pages
def test_query_term_finds_the_enumerations(m, records):
    # BasicSearch holds the phases and age groups (0.65), the intervention and arm group types (0.35), the study
    # type and the design's enumerations (0.3)
    phase3 = _ids_where(records, lambda ps: "PHASE3" in ps.get("designModule", {}).get("phases", []))
    def titles(ps: dict) -> str:
        return search_norm(" ".join(filter(None, (ps["identificationModule"].get(k)
                                                  for k in ("briefTitle", "officialTitle")))))

    titled = _ids_where(records, lambda ps: " phase 3 " in titles(ps) or " phase iii " in titles(ps))
    assert len(phase3 - titled) > 50  # phase 3 studies whose titles do not say so
    assert phase3 <= set(found(m, **{"query.term": '"phase 3"'}))
    crossover = _ids_where(records, lambda ps: ps.get("designModule", {}).get("designInfo", {})
                           .get("interventionModel") == "CROSSOVER")
    assert crossover and crossover <= set(found(m, **{"query.term": "crossover assignment"}))
    older = _ids_where(records, lambda ps: "OLDER_ADULT" in ps.get("eligibilityModule", {}).get("stdAges", []))
    assert older <= search_ids(m, query="older adult")
    observational = _ids_where(records, lambda ps: ps.get("designModule", {}).get("studyType") == "OBSERVATIONAL")
    assert observational and observational <= set(found(m, **{"query.term": "observational"}))
    # /studies/search-areas says which areas are enumerations, by their enum types
    from ctmirror.server.v2.routes import search_areas
    parts = {p["pieces"][0]: p for d in search_areas(m)[0]["areas"] if d["name"] == "InterventionSearch"
             for p in d["parts"]}
    assert parts["ArmGroupType"] == {"pieces": ["ArmGroupType"], "weight": 0.85, "isEnum": True,
                                     "isSynonyms": False, "type": "ArmGroupType"}
    assert parts["InterventionDescription"]["type"] == "markup" and not parts["InterventionName"]["isEnum"]


def test_coverage_asks_for_the_whole_text_its_beginning_or_its_end(m, records):
    """COVERAGE[FullMatch|StartsWith|EndsWith] on conditions, against the records' own condition texts."""
    term = search_norm("type 2 diabetes")

    def having(test) -> set[str]:
        return {r["protocolSection"]["identificationModule"]["nctId"] for r in records
                if any(test(search_norm(c)) for c in r["protocolSection"].get("conditionsModule", {})
                       .get("conditions", []))}

    whole, first, last = having(lambda c: c == term), having(lambda c: c.startswith(term)), \
        having(lambda c: c.endswith(term))
    assert whole < first and whole < last and first != last
    for coverage, expected in (("FullMatch", whole), ("StartsWith", first), ("EndsWith", last)):
        assert set(found(m, **{"query.term": f"AREA[Condition]COVERAGE[{coverage}](type 2 diabetes)"})) == expected
    contains = set(found(m, **{"query.term": "AREA[Condition]COVERAGE[Contains](type 2 diabetes)"}))
    assert contains == set(found(m, **{"query.term": "AREA[Condition](type 2 diabetes)"})) >= first | last
    with pytest.raises(v2.V2Error, match="COVERAGE"):
        found(m, **{"query.term": "AREA[Phase]COVERAGE[FullMatch]PHASE2"})
    with pytest.raises(v2.V2Error, match="COVERAGE"):
        found(m, **{"query.term": "COVERAGE[Partly]asthma"})


@pytest.mark.slow  # every record's every site, against four searches
def test_search_location_finds_the_terms_in_one_site(m, records):
    """SEARCH[Location](...): every part in one site (its facility, city, state, ZIP code, country and recruitment
    status), against the records' sites; the same terms over the whole study find more (Boston in one site, France
    in another; a German site, and a site recruiting elsewhere)."""
    def sites_holding(*parts: str, statuses: tuple[str, ...] | None = None) -> set[str]:
        return {r["protocolSection"]["identificationModule"]["nctId"] for r in records
                if any(all(search_norm(p) in search_norm(" , ".join(filter(None, (
                           x.get("facility"), x.get("city"), x.get("state"), x.get("zip"), x.get("country")))))
                           for p in parts) and (statuses is None or x.get("status") in statuses)
                       for x in r["protocolSection"].get("contactsLocationsModule", {}).get("locations", []))}

    recruiting_in_germany = sites_holding("Germany", statuses=("RECRUITING",))
    anywhere = set(found(m, **{"query.term": "AREA[LocationCountry]Germany AND AREA[LocationStatus]RECRUITING"}))
    assert len(recruiting_in_germany) > 20 and recruiting_in_germany < anywhere
    assert set(found(m, **{"query.term": "SEARCH[Location](AREA[LocationCountry]Germany AND "
                                         "AREA[LocationStatus]RECRUITING)"})) == recruiting_in_germany
    open_in_germany = sites_holding("Germany", statuses=("RECRUITING", "NOT_YET_RECRUITING"))
    assert open_in_germany > recruiting_in_germany and set(found(m, **{
        "query.term": "SEARCH[Location](AREA[LocationStatus](RECRUITING OR not yet recruiting) AND Germany)"})) == \
        open_in_germany
    assert set(found(m, **{"query.term": "SEARCH[Location](AREA[LocationStatus]RECRUITING)"})) == \
        sites_holding(statuses=("RECRUITING",))
    assert not found(m, **{"query.term": "SEARCH[Location](AREA[LocationStatus]RECRUITING AND "
                                         "AREA[LocationStatus]COMPLETED)"})

    boston = sites_holding("Boston", "Massachusetts")
    assert len(boston) > 50 and set(found(m, **{
        "query.term": "SEARCH[Location](AREA[LocationCity]Boston AND AREA[LocationState]Massachusetts)"})) == boston
    either = sites_holding("Paris", "France") | sites_holding("Lyon", "France")
    assert set(found(m, **{"query.term": "SEARCH[Location]((Paris OR Lyon) AND AREA[LocationCountry]France)"})) == \
        either
    assert not found(m, **{"query.term": "SEARCH[Location](AREA[LocationCity]Boston AND AREA[LocationCountry]France)"})
    assert found(m, **{"query.term": "AREA[LocationCity]Boston AND AREA[LocationCountry]France"})
    for refused in ("SEARCH[Location](NOT Boston)", "SEARCH[Location](AREA[Condition]Boston)",
                    "SEARCH[Outcome](pain)", "SEARCH[Location](AREA[LocationStatus](RECRUITING AND COMPLETED))"):
        with pytest.raises(v2.V2Error, match="SEARCH"):
            found(m, **{"query.term": refused})


def test_coverage_of_a_sponsors_name_and_its_other_spelling(m, records):
    """AREA[LeadSponsorName]COVERAGE[FullMatch]"..." (or COVER[...]): the whole name, as clients confirm a sponsor
    exactly; StartsWith and EndsWith its first and last words; against the records' lead sponsors. Without
    COVERAGE, the words anywhere in the name."""
    def lead(test) -> set[str]:
        return {r["protocolSection"]["identificationModule"]["nctId"] for r in records
                if test(search_norm(r["protocolSection"].get("sponsorCollaboratorsModule", {})
                                    .get("leadSponsor", {}).get("name", "")))}

    exact = lead(lambda name: name == search_norm("Merck Sharp & Dohme LLC"))
    assert exact and set(found(m, **{"filter.advanced": 'AREA[LeadSponsorName]COVERAGE[FullMatch]"Merck Sharp & '
                                                         'Dohme LLC"'})) == exact == set(found(m, **{
        "filter.advanced": 'AREA[LeadSponsorName]COVER[FullMatch]"merck sharp & dohme llc"'}))
    ending = lead(lambda name: name.endswith(search_norm("Cancer Institute")))
    assert len(ending) > 2 and set(found(m, **{
        "filter.advanced": 'AREA[LeadSponsorName]COVERAGE[EndsWith]"Cancer Institute"'})) == ending
    starting = lead(lambda name: name.startswith(search_norm("National")))
    assert starting and set(found(m, **{
        "filter.advanced": "AREA[LeadSponsorName]COVERAGE[StartsWith]National"})) == starting
    assert not found(m, **{"filter.advanced": "AREA[LeadSponsorName]COVERAGE[FullMatch]National"})
    anywhere = lead(lambda name: " cancer " in name and " institute " in name)
    assert set(found(m, **{"filter.advanced": "AREA[LeadSponsorName]institute cancer"})) == anywhere > ending


@pytest.mark.parametrize("written, value", [('"Active, not recruiting"', "ACTIVE_NOT_RECRUITING"),
                                            ('"Phase 2"', "PHASE2"), ('"early phase 1"', "EARLY_PHASE1"),
                                            ("recruiting", "RECRUITING")])
def test_an_enumerations_value_may_be_written_as_words(m, written, value):
    """AREA[OverallStatus]"Active, not recruiting" is AREA[OverallStatus]ACTIVE_NOT_RECRUITING: a value of an
    enumeration is found by its letters and digits, as the registry's pages write it."""
    area = "Phase" if "PHASE" in value else "OverallStatus"
    as_written = set(found(m, **{"filter.advanced": f"AREA[{area}]{written}"}))
    assert as_written and as_written == set(found(m, **{"filter.advanced": f"AREA[{area}]{value}"}))


def test_a_long_expression_finds_what_its_terms_find(m):
    """24 conditions joined by OR find every study one of them finds, and NOT takes a term's studies away, as a
    client listing a drug class's members writes it (the combinations are materialized: inlined, such a chain
    planned for minutes, each term doubling the planner's work); 64 terms a request, and a 400 beyond."""
    names = ["asthma", "diabetes", "obesity", "hypertension", "depression", "melanoma", "psoriasis", "migraine",
             "anemia", "glaucoma", "influenza", "hepatitis", "epilepsy", "arthritis", "leukemia", "lymphoma", "sepsis",
             "stroke", "insomnia", "autism", "dementia", "schizophrenia", "osteoporosis", "pneumonia"]
    each = {name: set(found(m, **{"query.cond": name})) for name in names}
    union = set().union(*each.values())
    assert 500 < len(union) < 1000  # every study on one page
    assert set(found(m, **{"query.cond": " OR ".join(names)})) == union
    assert set(found(m, **{"query.cond": f"({' OR '.join(names[:12])}) NOT ({' OR '.join(names[12:])})"})) == \
        set().union(*(each[n] for n in names[:12])) - set().union(*(each[n] for n in names[12:]))
    # a request's terms are bounded (planning grows faster than their number): 64 are planned, a 65th refused
    from ctmirror.server.v2.areas import QUERY_PARAMETERS
    from ctmirror.server.v2.matcher import Matcher

    sixty_four = essie.parse(" OR ".join(names + [f"{name} syndrome" for name in names] + names[:16]))
    Matcher(m, None).evaluate(sixty_four, QUERY_PARAMETERS["query.cond"])
    with pytest.raises(v2.V2Error, match="more than 64 terms"):
        Matcher(m, None).evaluate(essie.And((sixty_four, essie.Words("trial"))), QUERY_PARAMETERS["query.cond"])


def test_all_is_every_study_and_distance_finds_what_filter_geo_finds(m):
    """ALL (Essie's operator, in capitals) is every study; \\ALL and "all" are the word. AREA[LocationGeoPoint]
    DISTANCE[lat, lon, radius] finds the studies filter.geo finds for the same point and radius (mi or km, km
    unless said), with any other term; elsewhere it is refused."""
    every = set(m.sql("SELECT nct_id FROM studies")["nct_id"].to_list())
    page, _ = v2.studies(m, {"filter.advanced": "ALL", "countTotal": "true", "fields": "NCTId"}, None)
    assert page["totalCount"] == len(every)
    asthma = set(found(m, **{"query.cond": "asthma"}))
    assert set(found(m, **{"query.cond": "asthma", "filter.advanced": "ALL"})) == asthma
    assert not found(m, **{"filter.advanced": "NOT ALL"})
    assert set(found(m, **{"query.term": "\\ALL"})) == set(found(m, **{"query.term": "all"})) < every

    def near(point: str) -> set[str]:
        return set(found(m, **{"filter.geo": f"distance({point})"}))

    boston = near("42.36,-71.06,50mi")
    assert 20 < len(boston) < len(every) and near("42.36,-71.06,80.47km") == boston
    assert set(found(m, **{"filter.advanced": "AREA[LocationGeoPoint]DISTANCE[42.36, -71.06, 50mi]"})) == boston
    assert set(found(m, **{"filter.advanced": "AREA[LocationGeoPoint]DISTANCE[42.36,-71.06,30]"})) == \
        near("42.36,-71.06,30km") < boston
    assert set(found(m, **{"query.cond": "cancer", "filter.advanced": "AREA[LocationGeoPoint]DISTANCE[42.36,-71.06,"
                                                                     "50mi]"})) == \
        boston & set(found(m, **{"query.cond": "cancer"}))
    for refused in ("DISTANCE[42.36,-71.06,50mi]", "AREA[LocationCountry]DISTANCE[42.36,-71.06,50mi]"):
        with pytest.raises(v2.V2Error, match=r"DISTANCE\[\.\.\.\] applies to AREA\[LocationGeoPoint\]"):
            found(m, **{"filter.advanced": refused})


@pytest.mark.slow  # scans every version's interventions, outcomes and studies
def test_value_areas_and_text_areas_read_from_the_tables(m, records, sample_warehouse):
    def studies(test) -> set[str]:
        return {r["protocolSection"]["identificationModule"]["nctId"] for r in records if test(r["protocolSection"])}

    def holds(text: str | None, words: str) -> bool:
        return bool(text) and all(f" {w} " in search_norm(text) for w in search_norm(words).split())

    expected = {
        "AREA[EnrollmentType]ACTUAL": studies(
            lambda p: p.get("designModule", {}).get("enrollmentInfo", {}).get("type") == "ACTUAL"),
        'AREA[LocationStatus]"not yet recruiting"': studies(lambda p: any(
            x.get("status") == "NOT_YET_RECRUITING"
            for x in p.get("contactsLocationsModule", {}).get("locations", []))),
        "AREA[WhyStopped](slow accrual)": studies(lambda p: holds(p.get("statusModule", {}).get("whyStopped"),
                                                                  "slow accrual")),
        "AREA[InterventionDescription]tablet": studies(lambda p: any(
            holds(i.get("description"), "tablet")
            for i in p.get("armsInterventionsModule", {}).get("interventions", []))),
        "AREA[CollaboratorClass]NIH": studies(lambda p: any(
            c.get("class") == "NIH" for c in p.get("sponsorCollaboratorsModule", {}).get("collaborators", []))),
        "AREA[LastKnownStatus]RECRUITING": studies(lambda p: (p.get("statusModule") or {}).get(
            "overallStatus") == "UNKNOWN" and p["statusModule"].get("lastKnownStatus") == "RECRUITING"),
        "AREA[OrgFullName]university": studies(lambda p: holds(
            p["identificationModule"].get("organization", {}).get("fullName"), "university")),
        "AREA[PrimaryOutcomeTimeFrame](12 weeks)": studies(lambda p: all(any(  # each word in any of them
            holds(o.get("timeFrame"), word) for o in p.get("outcomesModule", {}).get("primaryOutcomes", []))
            for word in ("12", "weeks"))),
        "AREA[InterventionArmGroupLabel]placebo": studies(lambda p: any(
            holds(label, "placebo") for i in p.get("armsInterventionsModule", {}).get("interventions", [])
            for label in i.get("armGroupLabels", []))),
    }
    for query, wanted in expected.items():
        assert wanted and set(found(m, **{"query.term": query})) == wanted, query
    cutoff = date(2016, 3, 1)  # a stop reason is found only where the cutoff shows it
    with Mirror(sample_warehouse, as_of=cutoff) as then:
        page, _ = v2.studies(then, {"query.term": "AREA[WhyStopped]funding", "pageSize": "100"}, cutoff)
    assert page["studies"] and all(holds(s["protocolSection"]["statusModule"].get("whyStopped"), "funding")
                                   for s in page["studies"])
    with Mirror(sample_warehouse, as_of=cutoff) as then:  # a last known status only where the cutoff says UNKNOWN
        page, _ = v2.studies(then, {"query.term": "AREA[LastKnownStatus]RECRUITING", "pageSize": "100"}, cutoff)
    assert page["studies"] and all(s["protocolSection"]["statusModule"]["overallStatus"] == "UNKNOWN" and
                                   s["protocolSection"]["statusModule"]["lastKnownStatus"] == "RECRUITING"
                                   for s in page["studies"])


def test_the_free_text_finds_a_study_by_its_organisations_or_secondary_id_everywhere(m):
    """BasicSearch holds the organisation's and secondary study IDs, found whole: search's free text, term_matches
    and query.term alike (search's `query` found none of them before), scored at the weight the search-areas listing
    gives them; query.titles, whose areas are the titles, does not find them."""
    from ctmirror.server.v2.areas import IDENTIFIER_WEIGHT

    rows = m.rows("SELECT i.area, v.nct_id, i.norm FROM study_identifier AS i "
                  "JOIN study_version AS v USING (version_no) WHERE v.is_current AND length(i.norm) >= 10 "
                  "AND i.norm NOT SIMILAR TO '.*[a-z]{4,}.*' "
                  "ORDER BY i.norm LIMIT 5")
    assert {r["area"] for r in rows} == {"OrgStudyId", "SecondaryId"}
    by_title, only_by_id = 0, 0
    for row in rows:
        written = row["norm"].strip().upper().replace(" ", "-")  # as a user writes one: "2023-504374-38-00"
        assert row["nct_id"] in search_ids(m, query=written), written
        assert row["nct_id"] in found(m, **{"query.term": written}), written
        matches = dict(m.sql("SELECT nct_id, score FROM term_matches($q)", {"q": written}).rows())
        assert row["nct_id"] in matches
        if len(matches) == 1:
            assert float(matches[row["nct_id"]]) == IDENTIFIER_WEIGHT
            only_by_id += 1
        by_title += row["nct_id"] in found(m, **{"query.titles": written})
    assert by_title < len(rows) / 4  # a title that names its own protocol number, at most
    assert only_by_id


def test_tilt_ranks_recent_studies_higher_and_finds_the_same(m):
    def dated(params: dict) -> list[tuple[str, str]]:
        page, _ = v2.studies(m, {**params, "pageSize": "1000", "fields": "NCTId,StudyFirstPostDate"}, None)
        return [(s["protocolSection"]["identificationModule"]["nctId"],
                 s["protocolSection"].get("statusModule", {}).get("studyFirstPostDateStruct", {}).get("date", ""))
                for s in page["studies"]]
    plain, tilted = dated({"query.term": "cancer"}), dated({"query.term": "TILT[StudyFirstPostDate]cancer"})
    assert sorted(plain) == sorted(tilted) and plain != tilted
    newest = sorted(d for _, d in plain)[len(plain) // 2:]  # the later half of the dates
    assert sum(d in newest for _, d in tilted[:50]) > sum(d in newest for _, d in plain[:50])
    for refused, named in (("TILT[BriefTitle]cancer", "TILT[BriefTitle]"), ("FOOD[bar]cancer", "FOOD[...]"),
                           ("AREA[LocationCity]DISTANCE[42.36,-71.06,50mi]", "DISTANCE[...]")):
        with pytest.raises(v2.V2Error, match=named.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
            found(m, **{"query.term": refused})


def test_a_search_areas_name_is_an_area_and_fields_at_query_names_what_was_searched(m):
    for area, parameter, text in (("ConditionSearch", "query.cond", "heart attack"),
                                  ("InterventionSearch", "query.intr", "keytruda"),
                                  ("TitleSearch", "query.titles", "asthma"), ("LocationSearch", "query.locn", "Boston"),
                                  ("BasicSearch", "query.term", "insulin"), ("IdSearch", "query.id", "NCT00711542")):
        expected = found(m, **{parameter: text})
        assert expected and found(m, **{"filter.advanced": f"AREA[{area}]({text})"}) == expected, area
    page, _ = v2.studies(m, {"query.cond": "cancer", "query.locn": "Boston", "fields": "@query", "pageSize": "5"}, None)
    shown = {module for study in page["studies"] for module in study["protocolSection"]}
    assert {"identificationModule", "conditionsModule", "contactsLocationsModule"} <= shown
    assert not shown & {"eligibilityModule", "armsInterventionsModule", "sponsorCollaboratorsModule"}
    only_areas, _ = v2.studies(m, {"filter.advanced": "AREA[Phase]PHASE3", "fields": "@query", "pageSize": "3"}, None)
    assert {tuple(study["protocolSection"]) for study in only_areas["studies"]} == {("identificationModule",
                                                                                     "designModule")}
