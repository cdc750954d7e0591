"""Essie, the query syntax of ClinicalTrials.gov's `query.*` and `filter.advanced` parameters, parsed into a tree.

Supported: words and "quoted phrases", AND, OR, NOT (and a leading minus), parentheses, AREA[Field] before a term or
a parenthesised expression (AREA[ListField:size]: its size), RANGE[low, high] with MIN/MAX, dates and ages ("50
years"), MISSING, ALL (every study), DISTANCE[latitude, longitude, 50mi] under AREA[LocationGeoPoint],
EXPANSION[None|Term|Concept|Relaxation|Lossy],
COVERAGE[FullMatch|StartsWith|EndsWith|Contains] and TILT[a date field] before a term, SEARCH[Location](...) (its
terms found in one site), a word's prefix (asthm*: three letters or more) and a boost after a term (asthma^2: its
score doubled, what matches unchanged), and a backslash before an operator or a quote mark (\\AND, \\MISSING,
\\ALL: the word itself; \\", in a phrase or not: a quote mark, which like all punctuation only separates words). An
operator before a term applies to the search term that follows: every bare word up to the next operator. Adjacent
words with no operator between them are one Words node: the matcher finds them as a phrase or scattered over the
area's fields (each word somewhere), ranking the phrase higher; a quoted phrase only as a phrase (docs/methods.md).
Anything else (an operator not named here, as any NAME[...] of three or more capitals is one; SEARCH[...] of another
part of the record, a dangling operator, an unclosed bracket) is an EssieError naming the part, which the server
answers with 400: never a silently different answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctmirror.read.arguments import point_and_radius

MAX_QUERY_CHARACTERS = 10_000
MAX_DEPTH = 50


class EssieError(ValueError):
    """A query the parser does not accept; `part` is the text that stopped it."""

    def __init__(self, message: str, part: str) -> None:
        super().__init__(message)
        self.part = part


@dataclass(frozen=True)
class Words:
    """Adjacent bare words, or one quoted phrase (quoted: True)."""
    text: str
    quoted: bool = False


@dataclass(frozen=True)
class Prefix:
    """A word ending in '*' (asthm*): every word that starts with `text`."""
    text: str


@dataclass(frozen=True)
class Boost:
    """A term followed by ^N (asthma^2): its score multiplied by `factor`; which studies match is unchanged."""
    factor: float
    expression: object


@dataclass(frozen=True)
class Tilt:
    """TILT[DateField] before a term: which studies match is unchanged, and the more recent a study's date in that
    field, the higher its score."""
    field: str
    expression: object


@dataclass(frozen=True)
class Range:
    low: str | None  # None: MIN
    high: str | None  # None: MAX


@dataclass(frozen=True)
class Missing:
    pass


@dataclass(frozen=True)
class All:
    """ALL: every study."""


@dataclass(frozen=True)
class Distance:
    """DISTANCE[latitude, longitude, radius] under AREA[LocationGeoPoint]: a site within `km` of the point (the
    radius in mi or km, km unless said, as filter.geo)."""
    lat: float
    lon: float
    km: float


@dataclass(frozen=True)
class Area:
    field: str
    expression: object


@dataclass(frozen=True)
class Expansion:
    """EXPANSION[level] before a term: how far its words are expanded (level: one of EXPANSIONS, lower case)."""
    level: str
    expression: object


@dataclass(frozen=True)
class Coverage:
    """COVERAGE[how] before a term: how much of a field's text it must cover (how: one of COVERAGES, lower case):
    all of it, its beginning, its end, or any part (contains, the default)."""
    how: str
    expression: object


@dataclass(frozen=True)
class Search:
    """SEARCH[part](...): the expression's terms found together in one element of a list of the record, such as
    one site (part: "location", lower case)."""
    part: str
    expression: object


@dataclass(frozen=True)
class Not:
    expression: object


@dataclass(frozen=True)
class And:
    parts: tuple


@dataclass(frozen=True)
class Or:
    parts: tuple


EXPANSIONS = ("none", "term", "concept", "relaxation", "lossy")
COVERAGES = ("fullmatch", "startswith", "endswith", "contains")
_TOKEN = re.compile(r'\s*(?:(?P<quoted>"(?:[^"\\]|\\.)*")|(?P<escaped>\\(?:"|[^\s()"^]*))'
                    r'|(?P<open>\()|(?P<close>\))|(?P<op>\b(?:AND|OR|NOT)\b)'
                    r'|(?P<operator>[A-Z]{3,}\[[^\]]*\])'
                    r'|(?P<missing>\bMISSING(?=[\s()]|$))|(?P<all>\bALL(?=[\s()]|$))'  # alone: ALL-TRANS is a word
                    r'|(?P<minus>-(?=\S))|(?P<boost>\^\d+(?:\.\d+)?(?=[\s()]|$))'
                    r'|(?P<word>[^\s()"^\\]+|\^))')
MAX_BOOST = 1000.0
MIN_PREFIX_CHARACTERS = 3


def parse(text: str) -> object:
    """The tree of one Essie expression."""
    if len(text) > MAX_QUERY_CHARACTERS:
        raise EssieError(f"the expression is longer than {MAX_QUERY_CHARACTERS:,} characters", text[:40] + "...")
    tokens = _tokens(text)
    if not tokens:
        raise EssieError("the expression is empty", text)
    parser = _Parser(tokens)
    tree = parser.expression(0)
    if parser.position < len(tokens):
        kind, value = tokens[parser.position]
        raise EssieError(f"unexpected {value!r}" + (": a ')' without its '('" if kind == "close" else ""), value)
    return tree


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        found = _TOKEN.match(text, position)
        if found is None or found.end() == position:
            rest = text[position:].strip()
            raise EssieError(f"cannot read {rest[:40]!r}" + (": a '\"' without its closing '\"'"
                                                             if rest.startswith('"') else ""), rest[:40])
        kind, value = found.lastgroup, found.group(found.lastgroup)
        if kind == "escaped":  # \AND, \MISSING, \": the operator as a word of the term; a quote mark, none
            value = value[1:].strip('"')
            if value:
                tokens.append(("word", value))
        else:
            tokens.append((kind, value))
        position = found.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.position = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def expression(self, depth: int) -> object:
        if depth > MAX_DEPTH:
            raise EssieError(f"the expression nests deeper than {MAX_DEPTH} levels", "(")
        parts = [self.conjunction(depth)]
        while self.peek() == ("op", "OR"):
            self.take()
            parts.append(self.conjunction(depth))
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def conjunction(self, depth: int) -> object:
        parts = [self.unary(depth)]
        joined = [False]  # whether an explicit AND came before each part
        while True:
            token = self.peek()
            if token == ("op", "AND"):
                self.take()
                parts.append(self.unary(depth))
                joined.append(True)
            elif token is not None and token[0] != "close" and token != ("op", "OR"):
                parts.append(self.unary(depth))  # adjacency is AND
                joined.append(False)
            else:
                break
        merged: list[object] = []
        for part, explicit in zip(parts, joined):  # adjacent bare words are one phrase-like node
            if (not explicit and merged and isinstance(part, Words) and not part.quoted
                    and isinstance(merged[-1], Words) and not merged[-1].quoted):
                merged[-1] = Words(f"{merged[-1].text} {part.text}")
            else:
                merged.append(part)
        return merged[0] if len(merged) == 1 else And(tuple(merged))

    def unary(self, depth: int) -> object:
        token = self.peek()
        if token is None:
            raise EssieError("the expression ends where a term was expected", self.tokens[-1][1])
        kind, value = token
        if kind == "op" and value == "NOT" or kind == "minus":
            self.take()
            return Not(self.unary(depth + 1))
        if kind == "op":
            raise EssieError(f"{value} needs a term on each side", value)
        if kind == "boost":
            raise EssieError(f"{value} follows no term: write it after one, as asthma^2", value)
        node = self.primary(depth)
        while self.peek() is not None and self.peek()[0] == "boost":
            node = self.boosted(node)
        return node

    def term(self, depth: int) -> object:
        """What an operator before a term applies to: the search term that follows, which is every bare word up to
        the next operator, parenthesis, quote or boost ("AREA[Condition]heart attack" is the term "heart attack" in
        that area), or else the one expression that follows (a phrase, a parenthesised expression, NOT ...)."""
        operand = self.unary(depth + 1)
        if not isinstance(operand, Words) or operand.quoted:
            return operand
        words = [operand.text]
        while (token := self.peek()) is not None and token[0] == "word" and not token[1].endswith("*"):
            words.append(self.take()[1])
        node: object = Words(" ".join(words))
        while self.peek() is not None and self.peek()[0] == "boost":  # a boost after the term: the whole term's
            node = self.boosted(node)
        return node

    def boosted(self, node: object) -> Boost:
        factor = float(self.take()[1][1:])
        if not 0 < factor <= MAX_BOOST:
            raise EssieError(f"a boost is a number above 0 and up to {MAX_BOOST:g}", f"^{factor:g}")
        return Boost(factor, node)

    def primary(self, depth: int) -> object:
        kind, value = self.take()
        if kind == "open":
            inner = self.expression(depth + 1)
            if self.peek() is None or self.peek()[0] != "close":
                raise EssieError("a '(' without its ')'", "(")
            self.take()
            return inner
        if kind == "close":
            raise EssieError("a ')' without its '('", ")")
        if kind == "quoted":
            phrase = " ".join(value[1:-1].replace('\\"', " ").split())  # a quote mark separates words
            if not phrase:
                raise EssieError('an empty quoted phrase', value)
            return Words(phrase, quoted=True)
        if kind == "missing":
            return Missing()
        if kind == "all":
            return All()
        if kind == "operator":
            name, argument = value[:value.index("[")], value[value.index("[") + 1:-1].strip()
            if name == "AREA":  # a field, or a list field's size (AREA[Phase:size]2)
                if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*(:size)?", argument, re.IGNORECASE):
                    raise EssieError(f"AREA[{argument}] does not name a field", value)
                return Area(argument, self.term(depth))
            if name == "RANGE":
                return _range(argument, value)
            if name == "DISTANCE":
                return _distance(argument, value)
            if name == "EXPANSION":
                if argument.lower() not in EXPANSIONS:
                    raise EssieError(f"EXPANSION[{argument}] is not one of {', '.join(EXPANSIONS)}", value)
                return Expansion(argument.lower(), self.term(depth))
            if name in ("COVERAGE", "COVER"):  # COVER: the grammar's other spelling
                if argument.lower() not in COVERAGES:
                    raise EssieError(f"COVERAGE[{argument}] is not one of FullMatch, StartsWith, EndsWith, Contains",
                                     value)
                return Coverage(argument.lower(), self.term(depth))
            if name == "SEARCH":
                if argument.lower() != "location":
                    raise EssieError(f"SEARCH[{argument}] is not supported by ctmirror: SEARCH[Location] is", value)
                return Search("location", self.unary(depth + 1))
            if name == "TILT":
                if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*", argument):
                    raise EssieError(f"TILT[{argument}] does not name a date field", value)
                return Tilt(argument, self.term(depth))
            raise EssieError(f"{name}[...] is not supported by ctmirror", value)
        if value.endswith("*") and value.rstrip("*"):
            stem = value.rstrip("*")
            if len(re.sub(r"\W", "", stem)) < MIN_PREFIX_CHARACTERS or re.search(r"[\W_]", stem):
                raise EssieError(f"a wildcard needs {MIN_PREFIX_CHARACTERS} or more letters or digits of one word "
                                 "before its '*'", value)
            return Prefix(stem)
        return Words(value)


def _distance(argument: str, token: str) -> Distance:
    found = point_and_radius(argument.lower())  # the unit in any case: 50MI
    if found is None or not -90 <= found[0] <= 90 or not -180 <= found[1] <= 180:
        raise EssieError("DISTANCE takes a point and a radius: DISTANCE[latitude, longitude, 50mi] (latitude -90..90, "
                         "longitude -180..180, the radius in mi or km)", token)
    return Distance(*found)


def _range(argument: str, token: str) -> Range:
    bounds = [b.strip() for b in argument.split(",")]
    if len(bounds) != 2 or not all(bounds):
        raise EssieError("RANGE takes two bounds: RANGE[low, high] (MIN or MAX for an open end)", token)
    if bounds[0].upper() == "MAX" or bounds[1].upper() == "MIN":
        raise EssieError("RANGE[low, high] takes its low bound first: MIN may open the low end, MAX the high end",
                         token)
    low, high = (None if b.upper() in ("MIN", "MAX") else b for b in bounds)
    return Range(low, high)
