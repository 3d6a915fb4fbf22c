"""Benchmark: reading a project's crafted task files (Makefile, justfile) against ordinary ones of the same size.

The allow-list reads a project's Makefile (`core.makefile.makefile_recipes`) and justfile
(`core.justfile.justfile_recipes`) to judge a declared task by what it runs; the project is anyone's, so its files
may be crafted: calls nested deep, a variable naming another a thousand times five deep (a thousand to the fifth
once expanded), `$(` never closed, a chain of prerequisites each making the next, interpolations of a whole file.
Each crafted file of about `--size` bytes is read by the same reader as an ordinary file of that size (targets,
variables, recipes as projects write them), CPU per read, in `--rounds` interleaved rounds; goal: <= 2x.

Every crafted file is first read once in a forked child stopped at `--timeout` seconds (and held to `--memory` MB),
so one that blows up is reported as such (with the file that does it) instead of hanging the bench.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._table import Row, emit, in_child, interleaved
from bench.bench_apply import per_call
from core.justfile import justfile_recipes
from core.makefile import makefile_recipes


def _filled(body: str, size: int, ordinary: Callable[[int], str]) -> str:
    """`body`, then ordinary text up to `size` bytes: a crafted part smaller than the file is read beside the rest."""
    return body + ordinary(max(0, size - len(body.encode())))


def ordinary_makefile(size: int) -> str:
    """Targets, variables, pattern rules and recipes as a project writes them, to `size` bytes."""
    blocks: list[str] = []
    total, i = 0, 0
    while total < size:
        block = (
            f"# step {i}\n"
            f"SRC_{i} := src/mod_{i}.c src/util_{i}.c\n"
            f"OBJ_{i} := $(SRC_{i}:.c=.o)\n"
            f".PHONY: build_{i} test_{i}\n"
            f"build_{i}: $(OBJ_{i})\n"
            f"\t$(CC) $(CFLAGS) -o bin/app_{i} $^\n"
            f"test_{i}: build_{i}\n"
            f"\tpytest -q tests/test_{i}.py\n\n"
        )
        blocks.append(block)
        total += len(block)
        i += 1
    return "".join(blocks)[:size]


def ordinary_justfile(size: int) -> str:
    """Recipes with parameters, dependencies and interpolations as a project writes them, to `size` bytes."""
    blocks: list[str] = []
    total, i = 0, 0
    while total < size:
        block = (
            f"# step {i}\n"
            f"build_{i}:\n"
            f"    cargo build --bin app_{i}\n\n"
            f"test_{i} *args: build_{i}\n"
            f"    pytest -q tests/test_{i}.py {{{{args}}}}\n\n"
        )
        blocks.append(block)
        total += len(block)
        i += 1
    return "".join(blocks)[:size]


def _nested_calls(size: int) -> str:
    depth = (size - 60) // 10
    return "f = $(1)\nX := " + "$(call f," * depth + "x" + ")" * depth + "\nall:\n\techo $(X)\n"


def _five_deep(size: int) -> str:
    lines = ["V5 = x"] + [f"V{k} = " + f"$(V{k + 1})" * 1000 for k in range(4, -1, -1)]
    return _filled("\n".join(lines) + "\nall:\n\techo $(V0)\n\n", size, ordinary_makefile)


_CHAIN = 20_000  # files (recipes) in a chain, each made (run) first by the one before


def _chain(size: int, linked: bool = True) -> str:
    body = "".join(f"f{i}:{f' f{i + 1}' if linked else ''}\n\t:\n" for i in range(_CHAIN)) + f"f{_CHAIN}:\n\ttrue\n\n"
    return _filled(body, size, ordinary_makefile)


def _just_chain(size: int, linked: bool = True) -> str:
    body = (
        "".join(f"r{i}:{f' r{i + 1}' if linked else ''}\n    :\n" for i in range(_CHAIN)) + f"r{_CHAIN}:\n    true\n\n"
    )
    return _filled(body, size, ordinary_justfile)


MAKEFILES: dict[str, Callable[[int], str]] = {
    "deep nested $(call ...)": _nested_calls,
    "a variable naming another 1000 times, five deep": _five_deep,
    "unclosed $( in a recipe": lambda n: "all:\n\techo " + "$(" * ((n - 12) // 2) + "\n",
    "unclosed $( in an assignment": lambda n: "X = " + "$(" * ((n - 5) // 2) + "\nall:\n\techo $(X)\n",
    "a 20,000-file prerequisite chain": _chain,
    # the chain's density without its links: what 20,000 short targets cost, to tell the links' cost from it
    "20,000 targets, no prerequisites": lambda n: _chain(n, linked=False),
}

JUSTFILES: dict[str, Callable[[int], str]] = {
    "one interpolation of the whole file": lambda n: "t:\n    echo {{ " + "a + " * ((n - 20) // 4) + "b }}\n",
    "unclosed {{ repeated": lambda n: "t:\n    echo " + "{{" * ((n - 12) // 2) + "\n",
    "interpolations nested in quotes": lambda n: "t:\n    echo {{ '" + "{{ '" * ((n - 20) // 4) + " }}\n",
    "a 20,000-recipe dependency chain": _just_chain,
    "20,000 recipes, no dependencies": lambda n: _just_chain(n, linked=False),
}

READERS: list[tuple[str, Callable[[str], object], Callable[[int], str], dict[str, Callable[[int], str]]]] = [
    ("makefile_recipes", makefile_recipes, ordinary_makefile, MAKEFILES),
    ("justfile_recipes", justfile_recipes, ordinary_justfile, JUSTFILES),
]


def _child(read: Callable[[str], object], text: str, memory: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    resource.setrlimit(resource.RLIMIT_AS, (memory << 20, memory << 20))
    started = time.process_time()
    try:
        read(text)
    except MemoryError:
        out.put(None)
        return
    out.put(time.process_time() - started)


def probe(read: Callable[[str], object], text: str, timeout: float, memory: int) -> float | None:
    """CPU seconds of one read in a forked child; None when it does not finish within `timeout` or `memory`."""
    return in_child(_child, (read, text, memory), timeout)


def _reads(read: Callable[[str], object], text: str, budget: float) -> Callable[[], float]:
    return per_call(lambda: read(text), budget)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=500_000, help="bytes of each file")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.05, help="CPU seconds per timed batch of reads")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a first read is stopped")
    parser.add_argument("--memory", type=int, default=2048, help="MB a first read may take")
    args = parser.parse_args()
    rows: list[Row] = []
    for reader, read, ordinary, crafted in READERS:
        measures = {"floor": _reads(read, ordinary(args.size), args.budget)}
        for name, make in crafted.items():
            text = make(args.size)
            if probe(read, text, args.timeout, args.memory) is None:  # a blow-up: no round can make it pass
                what = f"{reader}, {name}, {len(text.encode()) // 1000} KB"
                print(f"  {what}: did not finish in {args.timeout:.0f} s / {args.memory} MB")
                rows.append(Row("recipes", what, "ms CPU", [float("inf")], goal="<= 2x", met=False))
                continue
            measures[name] = _reads(read, text, args.budget)
        got = interleaved(measures, max(3, args.rounds))
        floor = [x * 1e3 for x in got.pop("floor")]
        for name, samples in got.items():
            row = Row(
                "recipes",
                f"{reader}, {name}, {args.size // 1000} KB",
                "ms CPU",
                [x * 1e3 for x in samples],
                f"an ordinary file of {args.size // 1000} KB",
                floor,
                goal="<= 2x",
            )
            row.met = (row.ratio or 0) <= 2.0
            rows.append(row)
    emit(rows)


if __name__ == "__main__":
    main()
