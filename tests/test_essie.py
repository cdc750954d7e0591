"""The Essie parser on its own (ctmirror/server/essie.py): the tree of each form the live API documents, and a
specific EssieError naming the part for what it cannot read. What the trees match is tested on real records in
test_word_semantics.py and test_record_areas.py."""

from __future__ import annotations

import pytest

from ctmirror.server.essie import (
    MAX_DEPTH,
    All,
    And,
    Area,
    Boost,
    Coverage,
    Distance,
    EssieError,
    Expansion,
    Missing,
    Not,
    Or,
    Prefix,
    Range,
    Search,
    Words,
    parse,
)


@pytest.mark.parametrize(("text", "tree"), [
    ("heart attack", Words("heart attack")),  # adjacent bare words: one node, phrase or scattered
    ('"heart attack"', Words("heart attack", quoted=True)),
    ("heart AND attack", And((Words("heart"), Words("attack")))),  # an explicit AND keeps them apart
    ('lung "small cell"', And((Words("lung"), Words("small cell", quoted=True)))),
    ("asthma OR copd AND children", Or((Words("asthma"), And((Words("copd"), Words("children")))))),
    ("(asthma OR copd) AND children", And((Or((Words("asthma"), Words("copd"))), Words("children")))),
    ("asthma NOT children", And((Words("asthma"), Not(Words("children"))))),
    ("asthma -children", And((Words("asthma"), Not(Words("children"))))),
    ("NOT NOT asthma", Not(Not(Words("asthma")))),
    ("AREA[Phase]PHASE2", Area("Phase", Words("PHASE2"))),
    ("AREA[protocolSection.statusModule.lastUpdateSubmitDate]RANGE[2024-01-01, MAX]",
     Area("protocolSection.statusModule.lastUpdateSubmitDate", Range("2024-01-01", None))),
    ("AREA[MinimumAge]RANGE[MIN, 18 years]", Area("MinimumAge", Range(None, "18 years"))),
    ("AREA[StartDate]RANGE[2019, 2020]", Area("StartDate", Range("2019", "2020"))),
    ("AREA[ResultsFirstPostDate]MISSING", Area("ResultsFirstPostDate", Missing())),
    ("AREA[Condition](asthma OR copd)", Area("Condition", Or((Words("asthma"), Words("copd"))))),
    # an operator applies to the search term that follows: every bare word up to the next operator
    ("AREA[Condition]heart attack", Area("Condition", Words("heart attack"))),
    ("AREA[LocationCountry]United States", Area("LocationCountry", Words("United States"))),
    ("AREA[Condition]heart attack AND stroke", And((Area("Condition", Words("heart attack")), Words("stroke")))),
    ("AREA[Condition]heart attack^2 OR stroke", Or((Area("Condition", Boost(2.0, Words("heart attack"))),
                                                    Words("stroke")))),
    ('AREA[Condition]heart "attack"', And((Area("Condition", Words("heart")), Words("attack", quoted=True)))),
    ("EXPANSION[None]heart attack", Expansion("none", Words("heart attack"))),
    ('EXPANSION[Concept]"heart attack"', Expansion("concept", Words("heart attack", quoted=True))),
    ("COVERAGE[FullMatch]asthma", Coverage("fullmatch", Words("asthma"))),
    ("SEARCH[Location](AREA[LocationCity]Boston AND AREA[LocationStatus]RECRUITING)",
     Search("location", And((Area("LocationCity", Words("Boston")), Area("LocationStatus", Words("RECRUITING")))))),
    ("asthm*", Prefix("asthm")),
    ("asthma^2 OR copd", Or((Boost(2.0, Words("asthma")), Words("copd")))),
    ("(asthma OR copd)^1.5", Boost(1.5, Or((Words("asthma"), Words("copd"))))),
    # a backslash makes an operator a word of the term, and a quote mark a mark (which only separates words)
    ("\\MISSING", Words("MISSING")),
    ("ALL", All()),
    ("(ALL) NOT asthma", And((All(), Not(Words("asthma"))))),
    ("\\ALL", Words("ALL")),
    ("ALL-TRANS retinoic acid", Words("ALL-TRANS retinoic acid")),  # an operator stands alone
    ("B-ALL", Words("B-ALL")),
    ("MISSING-DATA", Words("MISSING-DATA")),
    ("AREA[LocationGeoPoint]DISTANCE[42.36, -71.06, 50mi]", Area("LocationGeoPoint",
                                                                 Distance(42.36, -71.06, 50 * 1.609344))),
    ("AREA[Phase:size]2", Area("Phase:size", Words("2"))),
    ('AREA[LeadSponsorName]COVER[FullMatch]"Merck"', Area("LeadSponsorName",
                                                          Coverage("fullmatch", Words("Merck", quoted=True)))),
    ("heart \\AND attack", Words("heart AND attack")),
    ("AREA[Keyword]\\NOT", Area("Keyword", Words("NOT"))),
    ('\\"sleep deprivation\\"', Words("sleep deprivation")),
    ('"he said \\"yes\\""', Words("he said yes", quoted=True)),
])
def test_each_form_parses_to_its_tree(text, tree):
    assert parse(text) == tree


@pytest.mark.parametrize(("text", "message", "part"), [
    ("", "the expression is empty", ""),
    ("asthma AND", "ends where a term was expected", "AND"),
    ("OR asthma", "OR needs a term on each side", "OR"),
    ("(asthma OR copd", "a '(' without its ')'", "("),
    ("asthma)", "a ')' without its '('", ")"),
    ('"heart attack', "a '\"' without its closing '\"'", '"heart attack'),
    ('""', "an empty quoted phrase", '""'),
    ("AREA[Phase 2]x", "does not name a field", "AREA[Phase 2]"),
    ("RANGE[2019]", "RANGE takes two bounds", "RANGE[2019]"),
    ("RANGE[MAX, 2019]", "takes its low bound first", "RANGE[MAX, 2019]"),
    ("EXPANSION[Everything]x", "is not one of none, term, concept", "EXPANSION[Everything]"),
    ("COVERAGE[Most]x", "is not one of FullMatch", "COVERAGE[Most]"),
    ("SEARCH[Outcome](x)", "SEARCH[Outcome] is not supported by ctmirror", "SEARCH[Outcome]"),
    ("DISTANCE[50mi]x", "DISTANCE takes a point and a radius", "DISTANCE[50mi]"),
    ("AREA[LocationGeoPoint]DISTANCE[91,0,5km]", "latitude -90..90", "DISTANCE[91,0,5km]"),
    ("BOGUS[50mi]x", "BOGUS[...] is not supported by ctmirror", "BOGUS[50mi]"),
    ("AREA[LeadSponsorName]COV[FullMatch]Merck", "COV[...] is not supported by ctmirror", "COV[FullMatch]"),
    ("as*", "a wildcard needs 3 or more letters", "as*"),
    ("^2 asthma", "follows no term", "^2"),
    ("asthma^0", "a boost is a number above 0", "^0"),
    ("(" * (MAX_DEPTH + 2) + "x" + ")" * (MAX_DEPTH + 2), f"nests deeper than {MAX_DEPTH} levels", "("),
    ("x " * 6_000, "longer than 10,000 characters", "x " * 20 + "..."),
])
def test_what_it_cannot_read_is_an_error_naming_the_part(text, message, part):
    with pytest.raises(EssieError, match=None) as refused:
        parse(text)
    assert message in str(refused.value) and refused.value.part == part
