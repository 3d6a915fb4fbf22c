"""Benchmark: `playbook mcp` as an agent meets it: the wall time from starting the server to its first answer
(initialize and list the tools), and a `search_lessons` call at 40 and 5,000 entries, through the `mcp` SDK's own
client over stdio; against `python -c pass` (an interpreter that starts and ends) and one `list_tools` round trip
(the protocol's own floor), measured in the same run, interleaved.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from bench._table import Row, emit  # noqa: E402
from bench.bench_hooks import snapshot  # noqa: E402
from flows.delivery.hook import write_snapshot_files  # noqa: E402


async def _measure(db: Path, searches: int) -> tuple[float, list[float], list[float]]:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "flows.cli", "mcp", "--db", str(db)], cwd=str(ROOT)
    )
    started = time.perf_counter()
    async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        await client.list_tools()
        start = time.perf_counter() - started
        search, floor = [], []
        for i in range(searches):
            t = time.perf_counter()
            await client.call_tool("search_lessons", {"query": f"why does the schema fixture cache break build {i}"})
            search.append(time.perf_counter() - t)
            t = time.perf_counter()
            await client.list_tools()
            floor.append(time.perf_counter() - t)
    return start, search, floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--searches", type=int, default=15)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-mcp-"))
    rows: list[Row] = []
    for size in (40, 5000):
        db = work / f"p{size}.duckdb"
        write_snapshot_files(db, snapshot(size))
        starts, bare, search, floor = [], [], [], []
        for _ in range(args.rounds):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - t)
            start, s, f = asyncio.run(_measure(db, args.searches))
            starts.append(start)
            search += s
            floor += f
        rows.append(Row("mcp", f"start to first answer at {size:,} entries", "s", starts, "python -c pass", bare))
        rows.append(
            Row(
                "mcp",
                f"search_lessons at {size:,} entries",
                "s",
                search,
                "a list_tools round trip",
                floor,
                goal="< 100 ms",
                met=sorted(search)[len(search) // 2] < 0.1,
            )
        )
    emit(rows)


if __name__ == "__main__":
    main()
