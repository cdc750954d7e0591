"""Agent tools through the official MCP client over stdio (`ctmirror mcp`, a subprocess), on bench/out/wh-<studies>.

    python bench/bench_mcp.py [--studies 500000] [--calls 100]

Reports calls/s and p50/p99 ms per tool, with realistic arguments: conditions and drugs drawn from the real sample's,
NCT IDs uniformly at random, a random cutoff on every contract call.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import call_material, scaled_warehouse_arguments  # noqa: E402
from ctmirror import Mirror  # noqa: E402


def main() -> None:
    args, root = scaled_warehouse_arguments(100)
    rng = random.Random(41)
    with Mirror(root) as m:
        ids, conditions, drugs = call_material(m)

    def cutoff() -> str:
        return (date(1995, 1, 1) + timedelta(days=rng.randrange(11_600))).isoformat()

    makers = {
        "search_trials": lambda: {"drug": rng.choice(drugs), "condition": rng.choice(conditions),
                                  "date_before": cutoff(), "max_results": 20},
        "detect_whitespace": lambda: {"drug": rng.choice(drugs), "condition": rng.choice(conditions),
                                      "date_before": cutoff()},
        "get_landscape": lambda: {"condition": rng.choice(conditions), "date_before": cutoff(), "top_n": 10},
        "get_terminated": lambda: {"query": rng.choice(conditions), "date_before": cutoff(), "max_results": 20},
        "get_trial": lambda: {"nct_id": rng.choice(ids)},
        "get_trial_details": lambda: {"nct_id": rng.choice(ids)},
        "search": lambda: {"condition": rng.choice(conditions), "page_size": 10, "date_before": cutoff()},
        "get_study": lambda: {"nct_id": rng.choice(ids)},
        "count_studies": lambda: {"query.cond": rng.choice(conditions)},
        "statistics": lambda: {"statistic": "stats_by_phase", "condition": rng.choice(conditions),
                               "date_before": cutoff()},
    }

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "ctmirror.cli", "-q", "-w", str(root), "mcp"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            print(f"{args.studies:,} studies; {args.calls} calls per tool through the stdio client")
            print(f"{'tool':<20}{'calls/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
            for name, make in makers.items():
                await session.call_tool(name, make())  # each tool's first call plans its queries
                times, errors = [], 0
                started = time.perf_counter()
                for _ in range(args.calls):
                    t = time.perf_counter()
                    result = await session.call_tool(name, make())
                    times.append((time.perf_counter() - t) * 1000)
                    errors += bool(result.isError)
                elapsed = time.perf_counter() - started
                times.sort()
                print(f"{name:<20}{args.calls / elapsed:>9,.0f}{statistics.median(times):>9.1f}"
                      f"{times[min(len(times) - 1, int(len(times) * 0.99))]:>9.1f}{errors:>8}")

    anyio.run(run)


if __name__ == "__main__":
    main()
