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
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import scaled_warehouse_arguments, tool_arguments  # noqa: E402
from ctmirror import Mirror  # noqa: E402


def main() -> None:
    args, root = scaled_warehouse_arguments(100)
    with Mirror(root) as m:
        makers = tool_arguments(m, random.Random(41))

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
                print(f"{name:<20}{args.calls / elapsed:>9,.0f}{statistics.median(times):>9.2f}"
                      f"{times[min(len(times) - 1, int(len(times) * 0.99))]:>9.2f}{errors:>8}")

    anyio.run(run)


if __name__ == "__main__":
    main()
