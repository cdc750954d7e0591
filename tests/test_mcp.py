"""Agent tools over MCP: the real server driven by the official SDK's client, over stdio (`ctmirror mcp`, a
subprocess) and over streamable HTTP (/mcp of `ctmirror serve` on a loopback port)."""

from __future__ import annotations

import json
import re
import select
import subprocess
import sys
from contextlib import asynccontextmanager
from datetime import date

import anyio
import httpx
import jsonschema
import pytest
from agent_calls import ANSWER_BUDGET, WRONG_JSON_TYPES, broadest_calls
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from test_serve import LoopbackServer

from ctmirror import Mirror
from ctmirror.core.warehouse import Warehouse
from ctmirror.read.registry import METHODS
from ctmirror.server.app import Settings
from ingest.snapshot import build_snapshot

pytestmark = pytest.mark.slow  # every test here launches a server

DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
CALLS = [("search_trials", {"drug": "tadalafil", "condition": "erectile dysfunction", "max_results": 200}),
         ("detect_whitespace", {"drug": "tadalafil", "condition": "NASH"}),
         ("get_landscape", {"condition": "NASH", "top_n": 3}),
         ("get_terminated", {"query": "erectile dysfunction", "max_results": 5}),
         ("get_trial", {"nct_id": "NCT00711542"}), ("get_trial_details", {"nct_id": "NCT00711542"}),
         ("search", {"condition": "diabetes", "page_size": 5}),
         ("statistics", {"statistic": "stats_by_phase", "condition": "asthma"}),
         # search's filters on the statistics and get_landscape; search's order, places and keys
         ("statistics", {"statistic": "stats_top_interventions", "condition": "cancer", "status": ["RECRUITING"],
                         "location": "Germany", "sponsor_class": ["INDUSTRY"]}),
         ("get_landscape", {"condition": "breast cancer", "phase": ["PHASE3"], "location": "Germany", "top_n": 3}),
         ("search", {"condition": "cancer", "near": "52.52,13.40,100km", "sort": "EnrollmentCount:desc",
                     "fields": ["nct_id", "enrollment"], "page_size": 5})]


@asynccontextmanager
async def stdio_session(root, *options):
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "ctmirror.cli", "-w", str(root), "mcp", *options])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session, await session.initialize()


@asynccontextmanager
async def http_session(url):
    async with streamable_http_client(f"{url}/mcp") as (read, write, _), ClientSession(read, write) as session:
        yield session, await session.initialize()


def expected_answer(m: Mirror, name: str, arguments: dict):
    if name == "statistics":
        name, arguments = arguments["statistic"], {k: v for k, v in arguments.items() if k != "statistic"}
    answer = m.call(name, **arguments)
    if isinstance(answer, list):
        return {"results": [a.model_dump(mode="json") if hasattr(a, "model_dump") else a for a in answer]}
    return answer.model_dump(mode="json")


async def check_tools(session, m: Mirror) -> None:
    """The tool list, and every tool (CALLS) answered as the Mirror answers it."""
    listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {*(n for n, method in METHODS.items() if method.kind != "statistic"), "statistics",
                          "get_study", "count_studies", "field_values", "field_definitions", "get_results",
                          "find_eligible"}
    assert len(listed.model_dump_json(exclude_none=True, by_alias=True)) <= 15_000  # an agent's context pays for it
    for tool in tools.values():  # described, titled, read-only, typed both ways
        assert tool.description and tool.title and tool.inputSchema["type"] == "object"
        assert tool.outputSchema["type"] == "object"
        assert tool.annotations.readOnlyHint and tool.annotations.idempotentHint
        assert tool.annotations.openWorldHint is False
    assert tools["get_landscape"].inputSchema["properties"]["condition"]["description"]
    for name, arguments in CALLS:
        result = await session.call_tool(name, arguments)
        assert not result.isError, result.content
        expected = expected_answer(m, name, arguments)
        if name == "search":  # a cursor is signed per call: that there is one is what compares
            for body in (result.structuredContent, expected):
                body["pagination"]["cursor"] = bool(body["pagination"]["cursor"])
        assert result.structuredContent == expected, name
        assert json.loads(result.content[0].text) == result.structuredContent or name == "search"
        jsonschema.validate(result.structuredContent, tools[name].outputSchema)  # as the SDK's client does too
    for name, arguments in broadest_calls(m):  # the broadest questions at default arguments: within the budget
        result = await session.call_tool(name, arguments)
        assert not result.isError and len(result.content[0].text) <= ANSWER_BUDGET, (name, arguments)
        jsonschema.validate(result.structuredContent, tools[name].outputSchema)
    for name, arguments, says in WRONG_JSON_TYPES:  # JSON types as the schemas give them, or a typed error
        result = await session.call_tool(name, arguments)
        assert result.isError and result.structuredContent["error"]["code"] == "INVALID_INPUT", (name, arguments)
        assert says in result.structuredContent["error"]["message"] and \
            result.structuredContent["error"]["invalid_input"] is not None
    for name in tools:  # every tool: an argument it does not take is a typed error, never a traceback
        result = await session.call_tool(name, {"colour": "red"})
        assert result.isError and result.structuredContent["error"]["code"] == "INVALID_INPUT", name
    for name in (n for n, method in METHODS.items() if method.kind == "statistic"):
        arguments = {"statistic": name, "condition": "asthma"}
        result = await session.call_tool("statistics", arguments)
        assert not result.isError and result.structuredContent == expected_answer(m, "statistics", arguments)
    refused = await session.call_tool("statistics", {"statistic": "stats_by_colour"})
    assert refused.isError and "by_phase, by_status" in refused.structuredContent["error"]["message"]
    for name, arguments, code in [("get_landscape", {"condition": "NASH", "top_n": 0}, "INVALID_INPUT"),
                                  ("get_landscape", {}, "INVALID_INPUT"),
                                  ("search_trials", {"drug": "x", "condition": "y", "colour": "red"}, "INVALID_INPUT"),
                                  ("get_trial", {"nct_id": "NCT99999999"}, "NOT_FOUND"),
                                  ("get_trial", {"nct_id": "banana"}, "INVALID_INPUT"),
                                  ("get_study", {"nct_id": "NCT99999999"}, "NOT_FOUND"),
                                  ("count_studies", {"query.cond": "(unclosed"}, "INVALID_INPUT"),
                                  ("search", {"essie": "(unclosed"}, "INVALID_INPUT"),
                                  ("field_values", {"fields": ["Nonsense"]}, "INVALID_INPUT"),
                                  ("get_results", {"nct_ids": []}, "INVALID_INPUT"),
                                  ("find_eligible", {"conditions": ["asthma"], "sex": "OTHER"}, "INVALID_INPUT"),
                                  ("no_such_tool", {}, "NOT_FOUND")]:
        result = await session.call_tool(name, arguments)
        assert result.isError and result.structuredContent["error"]["code"] == code, (name, result.content)
        assert result.structuredContent["error"]["recovery_hint"] and "Traceback" not in result.content[0].text
    study = (await session.call_tool("get_study", {"nct_id": "NCT00711542", "max_list_items": 2})).structuredContent
    assert study["study"]["protocolSection"]["identificationModule"]["nctId"] == "NCT00711542"
    assert study["capped"] and all(c["kept"] == 2 and c["total"] > 2 for c in study["capped"])
    count = (await session.call_tool("count_studies", {"query.cond": "asthma"})).structuredContent
    assert count["total"] == m.search(condition="asthma", page_size=1).pagination.total_count
    listed = (await session.call_tool("count_studies", {"query.term": "asthma OR copd", "list": 100})).structuredContent
    essie = (await session.call_tool("search", {"essie": "asthma OR copd", "page_size": 100})).structuredContent
    assert {i["nct_id"] for i in essie["items"]} == set(listed["nct_ids"]) != set()
    values = (await session.call_tool("field_values", {"fields": ["OverallStatus"]})).structuredContent
    assert sum(v["studiesCount"] for v in values["fields"][0]["topValues"]) + values["fields"][0][
        "missingStudiesCount"] == m.rows("SELECT count(*) AS n FROM studies")[0]["n"]
    found = (await session.call_tool("field_definitions", {"query": "why stopped"})).structuredContent
    assert any(f["path"] == "protocolSection.statusModule.whyStopped" for f in found["fields"])
    children = (await session.call_tool("field_definitions",
                                        {"path": "protocolSection.statusModule"})).structuredContent
    assert any(f["piece"] == "OverallStatus" for f in children["fields"])
    with_results = [r["nct_id"] for r in m.rows("SELECT nct_id FROM studies WHERE has_results ORDER BY 1 LIMIT 3")]
    results = (await session.call_tool("get_results", {"nct_ids": with_results})).structuredContent["studies"]
    assert all(r["has_results"] and "outcomeMeasuresModule" in r for r in results)
    eligible = (await session.call_tool("find_eligible", {"conditions": ["diabetes"], "age_years": 55,
                                                          "sex": "FEMALE"})).structuredContent
    kept = [stage["studies"] for stage in eligible["funnel"]]
    assert [s["stage"] for s in eligible["funnel"]] == ["conditions", "status", "age", "sex"]
    assert kept == sorted(kept, reverse=True) and kept[-1] >= len(eligible["studies"]) > 0
    template = (await session.list_resource_templates()).resourceTemplates[0]
    assert template.uriTemplate == "ctgov://study/{nctId}"
    resource = await session.read_resource("ctgov://study/NCT00711542")
    assert json.loads(resource.contents[0].text)["protocolSection"]["identificationModule"]["nctId"] == "NCT00711542"
    prompt = await session.get_prompt("landscape_analysis", {"condition": "NASH"})
    assert "get_landscape" in prompt.messages[0].content.text


def test_tools_over_stdio_answer_as_the_mirror(sample_warehouse):
    async def run() -> None:
        with Mirror(sample_warehouse) as m:
            async with stdio_session(sample_warehouse) as (session, init):
                assert "current state" in init.instructions
                await check_tools(session, m)

    anyio.run(run)


def test_tools_over_http_answer_as_the_mirror(sample_warehouse):
    async def run(url: str) -> None:
        with Mirror(sample_warehouse) as m:
            async with http_session(url) as (session, _):
                await check_tools(session, m)

    server = LoopbackServer(Settings(sample_warehouse))
    with server:
        anyio.run(run, server.url)
        check_a_lone_surrogate_is_answered_over_http(server.url)


def check_a_lone_surrogate_is_answered_over_http(url: str) -> None:
    """A lone surrogate posted to /mcp in a raw JSON-RPC request: an error that names it (never silence), and the
    next request is answered."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": "2025-06-18"}
    call = ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "get_landscape", '
            '"arguments": {"condition": "\\ud800"}}}')
    with httpx.Client(base_url=url, timeout=60) as client:
        refused = client.post("/mcp", content=call.encode(), headers=headers).json()
        assert refused["id"] == 7 and refused["result"]["isError"]  # the tool's typed error, naming the text
        error = refused["result"]["structuredContent"]["error"]
        assert error["code"] == "INVALID_INPUT" and "lone surrogate" in error["message"]
        answered = client.post("/mcp", headers=headers, json={
            "jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "get_landscape", "arguments": {"condition": "NASH", "top_n": 2}}})
        assert answered.json()["result"]["structuredContent"]["total_trial_count"] > 0


def _dates(value, path=""):
    """Every (path, date text, the struct's type) in an answer."""
    if isinstance(value, dict):
        kind = value.get("type") if isinstance(value.get("date"), str) else None
        for key, item in value.items():
            if key == "date" and isinstance(item, str) and DATE.match(item[:10]):
                yield f"{path}.date", item[:10], kind
            else:
                yield from _dates(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from _dates(item, path)
    elif isinstance(value, str) and DATE.match(value[:10]) and len(value) <= 10:
        yield path, value, None


def test_a_server_pinned_to_a_cutoff_leaks_nothing_from_after_it(sample_warehouse, tmp_path):
    """Every tool, over real records and a range of arguments, on a server pinned to 2016-03-01: no study first posted
    later, no date after it given as fact, and each study's status and results those of the frozen snapshot at that
    date (the reference the index is tested against)."""
    cutoff = date(2016, 3, 1)
    build_snapshot(Warehouse(sample_warehouse), cutoff, tmp_path / "then")

    async def run() -> None:
        with Mirror(tmp_path / "then") as then:
            shown = {r["nct_id"]: r for r in then.rows(
                "SELECT nct_id, overall_status, has_results, study_first_post_date FROM studies")}
            async with stdio_session(sample_warehouse, "--as-of", cutoff.isoformat()) as (session, init):
                assert cutoff.isoformat() in init.instructions and "reconstruction" in init.instructions
                for tool in (await session.list_tools()).tools:  # the pin is the one cutoff it answers at
                    assert not {"date_before", "holdout"} & set(tool.inputSchema["properties"]), tool.name
                answers = []
                for condition in ("cancer", "diabetes", "erectile dysfunction", "asthma", "HIV"):
                    for name, arguments in [("get_landscape", {"condition": condition}),
                                            ("get_terminated", {"query": condition}),
                                            ("search", {"condition": condition, "page_size": 50}),
                                            ("search_trials", {"drug": "placebo", "condition": condition}),
                                            ("detect_whitespace", {"drug": "metformin", "condition": condition}),
                                            ("statistics", {"statistic": "stats_by_phase", "condition": condition}),
                                            ("statistics", {"statistic": "stats_results_reporting",
                                                            "condition": condition}),
                                            ("count_studies", {"query.cond": condition}),
                                            ("find_eligible", {"conditions": [condition], "statuses": [],
                                                               "max_results": 50}),
                                            ("statistics", {"statistic": "stats_by_status",
                                                            "condition": condition})]:
                        result = await session.call_tool(name, arguments)
                        assert not result.isError, (name, result.content)
                        answers.append(result.structuredContent)
                text = json.dumps(answers)
                mentioned = sorted(set(re.findall(r"NCT\d{8}", text)))
                assert len(mentioned) > 50
                for nct_id in mentioned:
                    assert nct_id in shown, f"{nct_id} was first posted after the cutoff"
                later = await session.call_tool("get_landscape", {"condition": "cancer", "date_before": "2020-01-01"})
                assert later.isError and later.structuredContent["error"]["code"] == "INVALID_INPUT"
                for nct_id in mentioned[:60]:
                    trial = (await session.call_tool("get_trial", {"nct_id": nct_id})).structuredContent
                    assert trial["overall_status"] == (shown[nct_id]["overall_status"] or ""), nct_id
                    assert trial["results_posted"] == shown[nct_id]["has_results"], nct_id
                    details = (await session.call_tool("get_trial_details", {"nct_id": nct_id})).structuredContent
                    assert details["overall_status"] == trial["overall_status"]
                    record = (await session.call_tool("get_study", {"nct_id": nct_id})).structuredContent["study"]
                    results = (await session.call_tool("get_results", {"nct_ids": [nct_id]})).structuredContent
                    for path, value, kind in [*_dates(record), *_dates(results)]:
                        assert value <= cutoff.isoformat() or kind == "ESTIMATED", (nct_id, path, value, kind)
                    assert results["studies"][0]["has_results"] == shown[nct_id]["has_results"]
                statuses = (await session.call_tool("field_values", {"fields": ["OverallStatus"]})).structuredContent
                counted = {v["value"]: v["studiesCount"] for v in statuses["fields"][0]["topValues"]}
                assert counted == {r["s"]: r["n"] for r in then.rows(
                    "SELECT overall_status AS s, count(*) AS n FROM studies WHERE overall_status IS NOT NULL "
                    "GROUP BY 1")}

    anyio.run(run)


def test_a_request_that_is_not_valid_unicode_is_answered_with_an_error_and_the_session_goes_on(sample_warehouse):
    """A lone surrogate in a raw JSON-RPC line: the SDK cannot read it and only logs; the request gets an error
    bearing its id, and the next request is answered."""
    server = subprocess.Popen([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "mcp"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def exchange(line: str) -> dict:
        server.stdin.write(line.encode() + b"\n")
        server.stdin.flush()
        while True:
            ready, _, _ = select.select([server.stdout], [], [], 60)
            assert ready, f"no reply to {line[:80]}"
            reply = json.loads(server.stdout.readline())
            if "id" in reply:  # log notifications aside
                return reply

    try:
        exchange(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        refused = exchange('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "get_landscape", '
                           '"arguments": {"condition": "\\ud800"}}}')
        assert refused["id"] == 7 and refused["error"]["code"] == -32602 and "Unicode" in refused["error"]["message"]
        answered = exchange(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
            "name": "get_landscape", "arguments": {"condition": "NASH", "top_n": 2}}}))
        assert answered["id"] == 8 and answered["result"]["structuredContent"]["total_trial_count"] > 0
    finally:
        server.kill()
        server.wait()
