"""Every method of the registry is reachable from every surface with the same arguments and the same answer:
Mirror.call, Mirror.<name> (or Mirror.stats), Mirror.batch and the CLI's --json."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from ctmirror import InvalidArgument, Mirror
from ctmirror.cli import app, cli_example
from ctmirror.read.models import PaginationEnvelope
from ctmirror.read.registry import METHODS, STATISTIC_NAMES


def as_json(answer) -> object:
    """An answer as the CLI's --json prints it."""
    if isinstance(answer, PaginationEnvelope):
        return answer.contract_json()
    if isinstance(answer, BaseModel):
        return answer.model_dump(mode="json")
    if isinstance(answer, list) and answer and isinstance(answer[0], BaseModel):
        return [a.model_dump(mode="json") for a in answer]
    return json.loads(json.dumps(answer, default=str))


@pytest.fixture(scope="module")
def m(sample_mirror):
    return sample_mirror


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_answers_alike_on_every_surface(m, name):
    method = METHODS[name]
    example = method.example
    assert set(example) <= set(method.request.model_fields), "the example names fields the method takes"
    called = m.call(name, **example)
    direct = m.stats(name, **example) if name in STATISTIC_NAMES else getattr(m, name)(**example)
    [batched] = m.batch([(name, example)])
    assert as_json(direct) == as_json(called) == as_json(batched)
    assert called not in (None, []), "the example finds something on the sample"


@pytest.mark.slow  # a Mirror opened, and its statements prepared, for each method's command
@pytest.mark.parametrize("name", list(METHODS))
def test_every_methods_cli_example_answers_as_the_mirror(m, sample_warehouse, name):
    """The command the CLI's help shows as the method's example, with --json, prints the Mirror's answer."""
    method = METHODS[name]
    command = cli_example(method, f"stats {name}" if name in STATISTIC_NAMES else method.command).split()[1:]
    done = CliRunner().invoke(app, ["-w", str(sample_warehouse), *[w.strip('"') for w in _words(command)],
                                    "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == as_json(m.call(name, **method.example))


def _words(command: list[str]) -> list[str]:
    """The example's words, a quoted value with spaces kept whole."""
    words, open_quote = [], None
    for word in command:
        if open_quote is not None:
            open_quote += " " + word
            if word.endswith('"'):
                words.append(open_quote)
                open_quote = None
        elif word.startswith('"') and not word.endswith('"'):
            open_quote = word
        else:
            words.append(word)
    return words


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_refuses_alike(m, name):
    """An unknown argument, and a wrong one, are the same INVALID_INPUT on every surface."""
    method = METHODS[name]
    with pytest.raises(InvalidArgument, match="unknown argument 'bogus'"):
        m.call(name, **method.example, bogus=1)
    with pytest.raises(InvalidArgument, match="unknown argument 'bogus'"):
        m.batch([(name, {**method.example, "bogus": 1})])
    wrong = {"nct_id": "NCT1"} if "nct_id" in method.request.model_fields else {**method.example, "holdout": "x"}
    with pytest.raises(InvalidArgument) as refused:
        m.call(name, **wrong)
    assert refused.value.envelope()["error"]["code"] == "INVALID_INPUT"


def test_positional_arguments_keep_their_order(m):
    assert m.search_trials("semaglutide", "NASH", None, None, 5) == m.search_trials("semaglutide", "NASH",
                                                                                     max_results=5)
    assert len(m.search_trials("semaglutide", "NASH", None, None, 5)) <= 5
    with pytest.raises(TypeError, match="search_trials"):
        m.search_trials("a", "b", None, None, 5, "strict", "one too many")
    with pytest.raises(InvalidArgument, match="search_trials takes at most 6 arguments"):
        m.call("search_trials", "a", "b", None, None, 5, "strict", "one too many")


def test_every_method_is_defined_on_mirror_with_the_registrys_signature():
    """Mirror.<name> is a plain definition (go-to-definition and type checkers find it), generated from the
    registry: the same parameters, defaults and return type, and the file is what the generator writes."""
    import inspect

    from ctmirror.read import method_stubs

    for name, method in METHODS.items():
        defined = inspect.signature(getattr(Mirror, name))
        expected = method.signature()
        assert list(defined.parameters) == list(expected.parameters), name
        assert [p.default for p in defined.parameters.values()] == \
            [p.default for p in expected.parameters.values()], name
    assert method_stubs.TARGET.read_text(encoding="utf-8") == method_stubs.generated(), \
        "run python -m ctmirror.read.method_stubs"


def test_the_cli_lists_every_method():
    done = CliRunner().invoke(app, ["--help"])
    for method in METHODS.values():
        if method.command is not None:
            assert method.command in done.stdout
    done = CliRunner().invoke(app, ["stats", "--help"])
    assert "stats_by_phase" in done.stdout


def test_a_batch_validates_every_call_before_any_query(m, monkeypatch):
    from ctmirror.read import mirror

    ran = []
    monkeypatch.setattr(mirror, "answer_saying_left_out", lambda *a, **k: ran.append(a) or [None])
    with pytest.raises(InvalidArgument, match="page_size"):
        m.batch([("get_trial", {"nct_id": "NCT00711542"}), ("search", {"condition": "asthma", "page_size": 0})])
    assert ran == []


def test_each_call_query_reads_exactly_its_requests_columns():
    """The arguments tables are made from the request models (registry.bound_columns): each column a call query
    reads is a field of its request (or as_of, or one of ours), and each such column is read, so a field added to a
    request without SQL that reads it, or SQL reading a column no request has, fails here."""
    from ctmirror.core.sqlfiles import read_sql
    from ctmirror.read.registry import STATISTIC_ARGUMENTS

    reads = re.compile(r"\(SELECT (\w+) FROM (\w+)_args\)|\$(\w+)")
    sources = {name: [read_sql(f"calls/{name}.sql")] for name, method in METHODS.items() if method.kind == "set-wise"}
    sources["search"] = [read_sql("calls/search_page.sql"), read_sql("calls/search_count.sql")]
    sources["statistic"] = [read_sql("calls/statistic.sql")]
    methods = {**METHODS, "statistic": STATISTIC_ARGUMENTS}
    for name, texts in sources.items():
        method = methods[name]
        columns = {column for column, _ in method.columns}
        read = {column for text in texts for selected, table, parameter in reads.findall(text)
                for column in [selected if table == name else parameter] if column}
        ours = {"current_state", "any_filter", "many_calls", "page_limit", "today"}
        read = {column for column in read if not column.startswith(("given_", "relax_")) and column not in ours}
        assert read == columns, (name, read - columns, columns - read)
    assert ("nct_id", "VARCHAR") in METHODS["get_trial"].columns
    assert ("near", "BIGINT[]") in METHODS["search"].columns  # BoundAs: the versions near the point
    assert not {"holdout", "cursor", "page_size", "fields"} & {c for c, _ in METHODS["search"].columns}
