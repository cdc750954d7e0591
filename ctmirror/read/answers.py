"""Running calls of one method set-wise: a list of validated calls on one mirror → their answers, in order.

Each method's macro takes its arguments as lists (sql/methods/*_many) and answers every call in one query, so
a single call and a backtest's thousands run the same SQL; only the list's length differs, and every call carries
its own cutoff. Trials come back as (k, card_no, version_no, relevance) and their cards are then read by number
(calls/cards.sql).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from ctmirror.core.sqlfiles import read_sql
from ctmirror.core.words import may_scatter
from ctmirror.read.models import ExactList, TerminatedTrial, Trial
from ctmirror.read.registry import MAX_RESULTS, METHODS, STATISTIC_ARGUMENTS

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror
    from ctmirror.read.registry import Method

CardModel = TypeVar("CardModel", Trial, TerminatedTrial)
# Up to this many cards are looked up in the cards' index by literal keys; a larger set is read in one scan.
LITERAL_KEYS_MAX = 2_000
# A backtest's calls are answered this many at a time, which bounds the rows one query holds: broad conditions
# match tens of thousands of versions a call, and 2,000 such calls at their own cutoffs outgrew 18 GB in one query.
CALLS_PER_QUERY = 250


def rows_of(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """A query's result as one dict per row, by column name."""
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _column(method: Method, calls: list[dict[str, Any]], name: str) -> list[Any]:
    return [method.bound(name, call[name]) for call in calls]


@dataclass(frozen=True)
class FromQuery:
    """An argument whose value a query of ours computes on the connection, written into the arguments table there
    rather than bound from Python: search's `near`, a list of up to hundreds of thousands of versions, cost more to
    bring into Python and bind back (0.6-1.2 s at 500,000 studies) than the search. `query` is our SQL text, with its
    own bound `params`."""
    query: str
    params: dict[str, Any] = field(default_factory=dict)


def _set_arguments(mirror: Mirror, method: Method, arguments: dict[str, Any]) -> None:
    """Binds a call's arguments into the one row of the method's temporary arguments table, where its prepared call
    queries read them (made once per connection); a FromQuery's value is computed there."""
    if _make_argument_table(mirror, method):
        forget_plans(mirror)
    computed = {name: value for name, value in arguments.items() if isinstance(value, FromQuery)}
    mirror.con.execute(_argument_statements(method)[1], {name: None if name in computed else value
                                                           for name, value in arguments.items()})
    for name, value in computed.items():
        if name not in dict(method.columns):
            raise KeyError(f"{name} is not a column of {method.name}'s arguments")
        mirror.con.execute(read_sql("calls/args/set_from_query.sql").replace("{table}", f"{method.name}_args")
                           .replace("{column}", name).replace("{query}", value.query), value.params)


def _make_argument_table(mirror: Mirror, method: Method) -> bool:
    """Makes the method's arguments table on the connection unless it is there; whether it made it."""
    create, _ = _argument_statements(method)
    if create in mirror.argument_tables:
        return False
    mirror.con.execute(create)
    mirror.argument_tables.add(create)
    return True


def make_argument_tables(mirror: Mirror, methods: Iterable[Method]) -> None:
    """The methods' arguments tables, made when the connection opens, before any statement is prepared on it:
    making one later would make the statements prepared before it plan again (forget_plans)."""
    for method in methods:
        if method.kind in ("search", "set-wise") or method is STATISTIC_ARGUMENTS:
            _make_argument_table(mirror, method)


def forget_plans(mirror: Mirror) -> None:
    """Drops the statements prepared on the connection, to be prepared again when next used: for after a temporary
    table is made there (an arguments table make_argument_tables did not make).
    DuckDB plans a prepared statement again at every execution once the catalog has changed since it was
    prepared (15-20 ms a call of a method's), where preparing it again costs that once."""
    for name in [*mirror.prepared_calls, *mirror.shaped_plans]:
        mirror.con.execute(f"DEALLOCATE {name}")  # the statements' names are ours: methods' and shapes'
    mirror.prepared_calls.clear()
    mirror.shaped_plans.clear()


_ARGUMENT_STATEMENTS: dict[str, tuple[str, str]] = {}


def _argument_statements(method: Method) -> tuple[str, str]:
    """The statements that create and set a method's arguments table, from its declaration in the registry
    (sql/calls/args/: identifiers and types of ours; the values are bound)."""
    if method.name not in _ARGUMENT_STATEMENTS:
        table = f"{method.name}_args"
        suffix = "[]" if method.kind == "set-wise" else ""  # a list per column, one value per call; or one call's
        columns = ", ".join([*(f"NULL::{kind}{suffix} AS {column}" for column, kind in method.columns),
                             *(f"NULL::{kind} AS {column}" for column, kind, _ in method.once)])
        assignments = ", ".join([*(f"{column} = ${column}::{kind}{suffix}" for column, kind in method.columns),
                                 *(f"{column} = {expression}" for column, _, expression in method.once)])
        _ARGUMENT_STATEMENTS[method.name] = (
            read_sql("calls/args/table.sql").replace("{table}", table).replace("{columns}", columns),
            read_sql("calls/args/set.sql").replace("{table}", table).replace("{assignments}", assignments))
    return _ARGUMENT_STATEMENTS[method.name]


# A call alone reads its arguments from functions of the reader's (one per DuckDB type: `call_arguments_<type>` for
# a column's list of one value, `call_argument_<type>` for a `once` value; volatile, evaluated when the statement
# runs), which answer the values the Python API holds for it: writing them into the arguments table first (an
# UPDATE) took 0.5-0.8 ms of every call, a sixth of a get_trial's. A batch's lists go through the table, read once
# by the plan's subqueries (a function is called wherever its value is used).
CALL_ARGUMENTS, CALL_ARGUMENT = "call_arguments_", "call_argument_"
# The `once` values a call alone takes from Python rather than from their SQL expression (registry.Method.once).
ONCE_VALUES: dict[str, Callable[[], Any]] = {"current_date": date.today}
# The types of value a statement may read besides the methods' columns: a v2 search's (ctmirror/server/v2/search.py).
VALUE_KINDS = ("BIGINT", "BOOLEAN", "DATE", "DOUBLE", "VARCHAR", "VARCHAR[]")
# A read of an arguments table's column in a call query: (SELECT <column> FROM <method>_args).
ARGUMENT_READ = re.compile(r"\(SELECT (\w+) FROM (\w+)_args\)")


def install_call_arguments(mirror: Mirror) -> None:
    """Registers on the reader's connection the functions its calls alone read their arguments from: for each DuckDB
    type of the set-wise methods' columns, one answering the list (of one value) held for a column by name, and for
    each type of their `once` values, of search's and the statistics' arguments and of VALUE_KINDS, one answering
    the value."""
    def held(column: str) -> Any:
        return mirror.call_arguments.get(column)

    set_wise = [method for method in METHODS.values() if method.kind == "set-wise"]
    one_call = [method for method in [*METHODS.values(), STATISTIC_ARGUMENTS] if method.kind != "set-wise"]
    for kind in sorted({kind for method in set_wise for _, kind in method.columns}):
        mirror.con.create_function(_argument_function(kind), held, [duckdb.sqltypes.VARCHAR],
                                   duckdb.list_type(duckdb.sqltype(kind)), type="native", side_effects=True,
                                   null_handling="special")
    for kind in sorted({kind for method in set_wise for _, kind, _ in method.once}
                       | {kind for method in one_call for _, kind in method.columns} | set(VALUE_KINDS)):
        mirror.con.create_function(_argument_function(kind, once=True), held, [duckdb.sqltypes.VARCHAR],
                                   duckdb.sqltype(kind), type="native", side_effects=True, null_handling="special")


def argument_read(kind: str, name: str) -> str:
    """SQL reading the value held under `name` (one of ours) in Mirror.call_arguments, once per statement: a scalar
    subquery of the volatile function of its DuckDB type."""
    return f"(SELECT {_argument_function(kind, once=True)}('{name}'))"


def _argument_function(kind: str, once: bool = False) -> str:
    return (CALL_ARGUMENT if once else CALL_ARGUMENTS) + re.sub(r"\W", "_", kind.lower())


def _alone(mirror: Mirror, method: Method, call: dict[str, Any], statement: str) -> str | None:
    """The call query of a call alone, reading its arguments from the reader's functions, which now hold them;
    None where one of them can only be written into the table (a `once` value Python does not compute)."""
    functions = {column: _argument_function(kind) for column, kind in method.columns}
    values: dict[str, Any] = {column: [method.bound(column, call[column])] for column in functions}
    for column, kind, expression in method.once:
        if expression not in ONCE_VALUES:
            return None
        functions[column], values[column] = _argument_function(kind, once=True), ONCE_VALUES[expression]()

    def read(found: re.Match[str]) -> str:
        column, table = found.groups()
        if table != method.name or column not in functions:
            raise KeyError(f"calls/{method.name}.sql reads {column} of {table}_args, which {method.name} lacks")
        return f"{functions[column]}('{column}')"

    mirror.call_arguments = values
    return ARGUMENT_READ.sub(read, statement)


def _execute(mirror: Mirror, method: Method, calls: list[dict[str, Any]]) -> duckdb.DuckDBPyConnection:
    """Runs a set-wise method's call query on the calls' arguments, read from its arguments' table, so the query is
    prepared once per connection and each call only executes it. Where the query takes `$current_state`, calls
    that are all on the current state (no date_before, no as_of) run a plan of their own, in which it is the
    constant true and the planner drops the cutoff rules; any other set runs the plan for every cutoff (false).
    Likewise `$any_filter`: false (a plan without search's filters) when no call gives a status, phase or location;
    `$many_calls`: true for more than one call (search_trials then joins its texts' rows in the plan, once for all
    the calls, rather than each call's from the reader's arrays: sql/methods/search_trials.sql); and
    `$relax_<column>`: false (a plan without scattered words for those texts) when none of the calls' texts in
    that column has two words or more (words.may_scatter). A call alone runs a plan of its own that reads its
    arguments from the reader's functions (`_alone`) rather than the table. The statements' names are ours."""
    arguments = {column: _column(method, calls, column) for column, _ in method.columns}
    statement = read_sql(f"calls/{method.name}.sql")
    alone = _alone(mirror, method, calls[0], statement) if len(calls) == 1 else None
    if alone is None:
        _set_arguments(mirror, method, arguments)
    else:
        statement = alone
    constants = {
        "current_state": all(call.get("date_before") is None and call.get("as_of") is None for call in calls),
        "any_filter": any(call.get(key) is not None for call in calls for key in ("status", "phase", "location")),
        "many_calls": len(calls) > 1,
        **{f"relax_{column}": any(may_scatter(text) for text in arguments[column])
           for column in RELAXED.findall(statement)}}
    constants = {key: value for key, value in constants.items() if f"${key}" in statement}
    name = "_".join([method.name, *(PLAN_SUFFIXES.get(key, key) for key, value in constants.items() if value),
                     *(["alone"] if alone is not None else [])])
    if name not in mirror.prepared_calls:
        for key, value in constants.items():
            statement = statement.replace(f"${key}", "true" if value else "false")
        mirror.con.execute(f"PREPARE {name} AS\n{statement}")
        mirror.prepared_calls.add(name)
    return mirror.con.execute(f"EXECUTE {name}")


# Of a set-wise plan's name, per constant that is true (a `relax_<column>` by its own name).
PLAN_SUFFIXES = {"current_state": "current", "any_filter": "filtered", "many_calls": "many"}
SHAPED_PLANS_KEPT = 64
# A `$name` of a query file: a value bound, or written in by the shaped statements below (and the v2 server's).
PARAMETER = re.compile(r"\$(\w+)")
# A `$relax_<argument>` of a call query: whether that argument's texts may scatter their words.
RELAXED = re.compile(r"\$relax_(\w+)")


def execute_shaped(mirror: Mirror, method: Method, call: str, arguments: dict[str, Any],
                   page_limit: int | None = None, query: str | None = None) -> duckdb.DuckDBPyConnection:
    """Runs calls/<call>.sql (or `query`, a text of ours named `call`) for one call whose arguments may each be
    absent (None), as `search`'s are.

    One generic plan would run every matcher and filter, given or not: that was most of a search. So the query
    is prepared once per shape, the set of given arguments: in its text each `$name` of an absent argument
    becomes the NULL literal, which the planner folds away with the work it guards, and each given one a read
    of its bound value from the arguments' table (calls/args/search_table.sql); `$given_<name>` becomes `true`
    or `false`, whether that argument is given; `$relax_<name>`, whether its text may scatter its words
    (words.may_scatter: false plans no scattered words for it). `$page_limit` becomes the page size, an int we
    validated, because DuckDB plans a top-N only for a constant limit. No value is ever pasted. A given argument
    is read, once per statement, from the reader's function of its type (a scalar subquery of a volatile call, as a
    call alone's are: `install_call_arguments`), unless one is a FromQuery, whose value is computed in the table."""
    in_table = any(isinstance(value, FromQuery) for value in arguments.values())
    if in_table:
        _set_arguments(mirror, method, arguments)
    else:
        mirror.call_arguments = dict(arguments)
    kinds = dict(method.columns)
    source = read_sql(f"calls/{call}.sql") if query is None else query
    given = [name for name, value in arguments.items() if value is not None]
    relaxed = [name for name in RELAXED.findall(source) if name in arguments and may_scatter(arguments[name])]
    shape = sum(1 << i for i, value in enumerate(arguments.values()) if value is not None)
    scatter = sum(1 << i for i, name in enumerate(arguments) if name in relaxed)
    name = (f"{call}_{shape:x}_{scatter:x}" + ("" if page_limit is None else f"_{int(page_limit)}")
            + ("_table" if in_table else ""))

    def statement() -> str:
        def placeholder(found: re.Match[str]) -> str:
            argument = found.group(1)
            if argument == "page_limit" and page_limit is not None:
                return str(int(page_limit))
            if argument.startswith("given_") and (named := argument.removeprefix("given_")) in arguments:
                return "true" if named in given else "false"
            if argument.startswith("relax_") and (named := argument.removeprefix("relax_")) in arguments:
                return "true" if named in relaxed else "false"
            if argument not in arguments:
                raise KeyError(f"calls/{call}.sql reads ${argument}, which the registry's columns of search lack")
            if argument not in given:
                return "NULL"
            if in_table:
                return f'(SELECT "{argument}" FROM {method.name}_args)'
            return argument_read(kinds[argument], argument)

        return PARAMETER.sub(placeholder, source)

    return execute_prepared(mirror, name, statement)


def execute_prepared(mirror: Mirror, name: str, statement: Callable[[], str]) -> duckdb.DuckDBPyConnection:
    """Executes the statement prepared on the connection as `name` (ours), preparing statement() first if it is
    not; the SHAPED_PLANS_KEPT most recently used are kept (search's shapes, the v2 server's)."""
    con = mirror.con
    if name not in mirror.shaped_plans:
        con.execute(f"PREPARE {name} AS\n{statement()}")
        mirror.shaped_plans[name] = None
        if len(mirror.shaped_plans) > SHAPED_PLANS_KEPT:
            oldest = next(iter(mirror.shaped_plans))
            con.execute(f"DEALLOCATE {oldest}")
            del mirror.shaped_plans[oldest]
    else:
        mirror.shaped_plans[name] = mirror.shaped_plans.pop(name)  # most recently used last
    return con.execute(f"EXECUTE {name}")


def _literals(numbers: set[int]) -> str:
    return ", ".join(str(int(n)) for n in sorted(numbers))


def card_text(card_head: str, references_json: str | None, reconstructed_from: Any, overall_status: str | None,
              why_stopped: str | None, results_posted: bool | None, as_of_exact: bool | None, enrollment: int | None,
              start_date: str | None, completion_date: str | None, withheld: list[str] | None) -> str:
    """A trial card's JSON from its columns, as the catalog's card_json macro writes it (sql/methods/_cards.sql, the
    same arguments): the version's card head and what the card's span changes. The withheld names are the Trial's:
    the study's completion date is not a Trial field, its primary completion date is `completion_date`."""
    shown = [("completion_date" if name == "primary_completion_date" else name)
             for name in withheld or [] if name != "completion_date"]
    return "".join((
        card_head,
        ',"overall_status":', json.dumps(overall_status),
        ',"why_stopped":', json.dumps(why_stopped),
        ',"results_posted":', json.dumps(results_posted),
        ',"enrollment":', json.dumps(enrollment),
        ',"start_date":', json.dumps(start_date),
        ',"completion_date":', json.dumps(completion_date),
        ',"references":', references_json if as_of_exact else "[]",
        ',"as_of_exact":', json.dumps(as_of_exact),
        ',"reconstructed_from":', "null" if reconstructed_from is None else f'"{reconstructed_from:%Y-%m-%d}"',
        ',"withheld":', json.dumps(shown), "}"))


def _cards(mirror: Mirror, table: str, ranked: list[tuple[int, int, int, Any]]) -> dict[int, str]:
    """card_no → card JSON of the ranked rows (k, card_no, version_no, relevance), from `table` (trial_card or
    stopped_card, ours). The numbers come from our own ranking query as ints; formatted as literals they are the one
    form DuckDB looks up in a table's index (a join on bound values reads every card). A trial card's JSON is
    written here from its columns (card_text)."""
    if not ranked:
        return {}
    cards = {card_no for _, card_no, _, _ in ranked}
    versions = {version_no for _, _, version_no, _ in ranked}
    call = "cards" if table == "trial_card" else "stopped_cards"
    if len(cards) <= LITERAL_KEYS_MAX:
        query = (read_sql(f"calls/{call}.sql").replace("{card_numbers}", _literals(cards))
                 .replace("{version_numbers}", _literals(versions)))
        rows = mirror.con.execute(query).fetchall()
    else:
        arguments = {"card_numbers": sorted(cards)}
        if call == "cards":
            arguments["version_numbers"] = sorted(versions)
        rows = mirror.con.execute(read_sql(f"calls/{call}_scan.sql"), arguments).fetchall()
    if call == "stopped_cards":
        return dict(rows)
    return {card_no: card_text(*columns) for card_no, *columns in rows}


def _ranked_cards(mirror: Mirror, table: str, model: type[CardModel], ranked: list[tuple[int, int, int, Any]],
                  count: int) -> list[list[CardModel]]:
    cards = _cards(mirror, table, ranked)
    answers: list[list[CardModel]] = [[] for _ in range(count)]
    for k, card_no, _, relevance in ranked:
        item = model.model_validate_json(cards[card_no])
        item.relevance = float(relevance)
        answers[k - 1].append(item)
    return answers


def _one_row_each(mirror: Mirror, method: Method, model: type, calls: list[dict[str, Any]]) -> list[Any]:
    answers: list[Any] = [None] * len(calls)
    for record in rows_of(_execute(mirror, method, calls)):
        answers[record.pop("k") - 1] = model.model_validate(record)
    return answers


def _by_id(mirror: Mirror, method: Method, calls: list[dict[str, Any]]) -> list[Any]:
    """A lookup by ID, prepared once as every set-wise call is: planning its macro took longer than the lookup."""
    answers: list[Any] = [None] * len(calls)
    for k, card in _execute(mirror, method, calls).fetchall():
        answers[k - 1] = method.model.model_validate_json(card)
    return answers


def answer(mirror: Mirror, method: Method, calls: list[dict[str, Any]]) -> list[Any]:
    """Every call's answer, in order, CALLS_PER_QUERY calls to a query; a query that runs out of memory is split
    in two and each half answered alone (a single call that does has the error)."""
    found: list[Any] = []
    for start in range(0, len(calls), CALLS_PER_QUERY):
        found.extend(_answer_halving(mirror, method, calls[start:start + CALLS_PER_QUERY]))
    return found


def _answer_halving(mirror: Mirror, method: Method, calls: list[dict[str, Any]]) -> list[Any]:
    try:
        return _answer_some(mirror, method, calls)
    except duckdb.OutOfMemoryException:
        if len(calls) == 1:
            raise
    half = len(calls) // 2
    return _answer_halving(mirror, method, calls[:half]) + _answer_halving(mirror, method, calls[half:])


def _answer_some(mirror: Mirror, method: Method, calls: list[dict[str, Any]]) -> list[Any]:
    if method.shape == "by_id":
        return _by_id(mirror, method, calls)
    if method.shape == "ranked_cards":
        ranked = _execute(mirror, method, calls).fetchall()
        return _ranked_cards(mirror, method.card_table, method.model, ranked, len(calls))
    return _one_row_each(mirror, method, method.model, calls)


def answer_saying_left_out(mirror: Mirror, method: Method, calls: list[dict[str, Any]]) -> list[Any]:
    """answer(), each call answered with exact answers only at a cutoff saying how many studies it left out."""
    found = mirror.recovering(lambda: answer(mirror, method, calls))
    wanted = [i for i, call in enumerate(calls) if mirror.exact_only and call.get("as_of") is not None]
    if wanted:
        strict = mirror.strict_sibling()
        counts = strict.recovering(lambda: left_out(strict, method, [calls[i] for i in wanted],
                                                    [found[i] for i in wanted]))
        for i, count in zip(wanted, counts):
            found[i] = with_left_out(found[i], count)
    return found


def left_out(strict: Mirror, method: Method, calls: list[dict[str, Any]], exact: list[Any]) -> list[int | None]:
    """For each call answered with exact answers only at its cutoff (`exact`, its answers): how many studies the
    same call answered strictly (on `strict`, which shows reconstructions) shows reconstructed, which the exact
    answer leaves out. Trials: among all the strict call ranks (up to MAX_RESULTS, not only the max_results
    shown); whitespace: of the drug's and the condition's trials; a landscape: of its trials. None for a lookup by
    ID (a study left out is not found)."""
    if method.shape == "by_id":
        return [None] * len(calls)
    if method.shape == "ranked_cards":
        ranked = _execute(strict, method, [{**call, "max_results": MAX_RESULTS} for call in calls]).fetchall()
        query = read_sql("calls/queries.sql", "reconstructed_cards").replace("{card_table}", method.card_table)
        numbers = sorted({card_no for _, card_no, _, _ in ranked})
        reconstructed = {row[0] for row in strict.con.execute(query, {"card_numbers": numbers}).fetchall()}
        counts = [0] * len(calls)
        for k, card_no, _, _ in ranked:
            counts[k - 1] += card_no in reconstructed
        return counts
    return [_trial_total(whole) - _trial_total(shown) for whole, shown in zip(answer(strict, method, calls), exact)]


def _trial_total(found: Any) -> int:
    """The trials a one-row answer counts: a landscape's, or whitespace's (its three counts are disjoint)."""
    if hasattr(found, "total_trial_count"):
        return found.total_trial_count
    return found.exact_match_count + found.drug_only_trials + found.condition_only_trials


def with_left_out(found: Any, count: int | None) -> Any:
    """An answer that says how many studies it left out (LeftOut's field, or ExactList's attribute)."""
    if count is None or found is None:
        return found
    if isinstance(found, list):
        return ExactList(found, left_out=count)
    found.left_out = count
    return found
