"""Benchmark: `playbook mcp` as an agent meets it, in the server's CPU (user + system of its process, all threads,
read from the kernel's clock for that process around each call, so machine load cannot pass or fail it): from
starting the server to its first answer (initialize and list the tools), and a `search_lessons` call at 40 and
5,000 entries, through the `mcp` SDK's own client over stdio; against `python -c pass` (an interpreter that starts
and ends, its CPU from `getrusage(RUSAGE_CHILDREN)`) and one `list_tools` round trip (the protocol's own floor, the
server's CPU read the same way), measured in the same run, interleaved. The wall times are printed beside them,
not judged. Goal: a search < 100 ms of the server's CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from bench._table import Row, emit  # noqa: E402
from bench.bench_hooks import run_child, snapshot  # noqa: E402
from flows.delivery.hook import write_snapshot_files  # noqa: E402


def server_pid() -> int:
    """The pid of this process's one child running `flows.cli mcp` (the SDK's client does not expose it)."""
    me = str(os.getpid())
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = (proc / "stat").read_text().rsplit(")", 1)[1].split()[1]
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone between the listing and the read
            continue
        if ppid == me and b"flows.cli" in cmdline and b"mcp" in cmdline:
            found.append(int(proc.name))
    if len(found) != 1:
        raise RuntimeError(f"expected one mcp server child, found {found}")
    return found[0]


def cpu_of(pid: int) -> float:
    """CPU seconds `pid` has used (user + system, every thread, dead ones included), to the nanosecond.

    The clock id is Linux's process CPU clock of `pid` (what `clock_getcpuclockid` returns): /proc/PID/stat's
    utime + stime count the same time but in 10 ms ticks, coarser than a search.
    """
    return time.clock_gettime((~pid << 3) | 2)


async def _measure(db: Path, searches: int) -> tuple[float, float, list[float], list[float], list[float], list[float]]:
    """Start the server, answer once, then alternate a search and a `list_tools`: CPU and wall of each."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "flows.cli", "mcp", "--db", str(db)], cwd=str(ROOT)
    )
    started = time.perf_counter()
    async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        await client.list_tools()
        start_wall = time.perf_counter() - started
        pid = server_pid()
        start_cpu = cpu_of(pid)  # all it used from exec to its first answers
        search, floor, search_wall, floor_wall = [], [], [], []
        for i in range(searches):
            c, t = cpu_of(pid), time.perf_counter()
            await client.call_tool("search_lessons", {"query": f"why does the schema fixture cache break build {i}"})
            search.append(cpu_of(pid) - c)
            search_wall.append(time.perf_counter() - t)
            c, t = cpu_of(pid), time.perf_counter()
            await client.list_tools()
            floor.append(cpu_of(pid) - c)
            floor_wall.append(time.perf_counter() - t)
    return start_cpu, start_wall, search, floor, search_wall, floor_wall


def _wall(what: str, samples: list[float]) -> None:
    low, mid, high = min(samples), statistics.median(samples), max(samples)
    print(f"  wall, not judged: {what} {low * 1e3:.1f} / {mid * 1e3:.1f} / {high * 1e3:.1f} ms")


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
        walls: dict[str, list[float]] = {"start": [], "python -c pass": [], "search": [], "list_tools": []}
        for _ in range(args.rounds):
            cpu, wall = run_child([sys.executable, "-c", "pass"], "")
            bare.append(cpu)
            walls["python -c pass"].append(wall)
            start, start_wall, s, f, sw, fw = asyncio.run(_measure(db, args.searches))
            starts.append(start)
            walls["start"].append(start_wall)
            search += s
            floor += f
            walls["search"] += sw
            walls["list_tools"] += fw
        for what, samples in walls.items():
            _wall(f"{what} at {size:,} entries", samples)
        # ms: a search is a few ms, which two decimals of seconds would round away
        ms = [[x * 1e3 for x in xs] for xs in (starts, bare, search, floor)]
        rows.append(
            Row(
                "mcp",
                f"start to first answer, server CPU, at {size:,} entries",
                "ms CPU",
                ms[0],
                "python -c pass",
                ms[1],
            )
        )
        rows.append(
            Row(
                "mcp",
                f"search_lessons, server CPU, at {size:,} entries",
                "ms CPU",
                ms[2],
                "a list_tools round trip",
                ms[3],
                goal="< 100 ms CPU",
                met=statistics.median(ms[2]) < 100,
            )
        )
    emit(rows)


if __name__ == "__main__":
    main()
