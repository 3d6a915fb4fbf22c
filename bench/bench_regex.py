"""Benchmark: crafted inputs against ordinary text of the same size, through every entry point that runs patterns.

Regular expressions that backtrack cost time exponential or quadratic in a crafted input (one 133-character
`sshpass` line took 335 s in `ingest`). Each entry point below is timed on ordinary text (the bundled transcripts'
own strings, cut to size) and on crafted inputs of the same size in bytes (100 B, 10 KB, 1 MB): nested quantifiers, long
runs of a repeated token, near-matches of each rule (a rule's start without its end, or a value it must pass over),
a 1 MB line of repeated words. Each measure runs in a child process forked after the patterns are warmed up, so a
hung one is stopped at `--timeout` and reported as such. Every crafted input is measured once (CPU seconds of the
child, not wall) against its entry point's ordinary text; per size, the `--worst` highest ratios are measured again
beside their ordinary text in `--rounds` interleaved rounds, and the highest ratio of medians is the verdict.
Goal: <= 2x.

Other modules add their own entry point in one line: `ENTRY_POINTS.append(("name", callable_of_a_text))`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, in_child  # noqa: E402
from core.models import SessionMessage  # noqa: E402
from core.redact import Redactor, redact, redact_parts  # noqa: E402
from core.render import render_session  # noqa: E402
from core.screen import text_holds  # noqa: E402
from core.shell import parse_command  # noqa: E402
from core.transcript_redaction import redact_transcript  # noqa: E402

SIZES = (100, 10_000, 1_000_000)
# `(a+)+$`: the personal pattern the issue found compiled unchecked (exponential on Python's `re`).
_PERSONAL = Redactor(home="/home/bench", extra=("alice example", r"build-[0-9]+\.acme\.internal", "(a+)+$"))


def _transcript(text: str) -> object:
    return redact_transcript(json.dumps({"type": "user", "message": {"role": "user", "content": text}}), _PERSONAL)


def _render(text: str) -> object:
    return render_session([SessionMessage(seq=0, role="user", kind="text", text=text)], budget_tokens=10**7)


def _ingest_screen() -> Callable[[str], object]:
    """The SQL that picks the records the redactor reads (DuckDB's RE2): every rule's shape, in one pass."""
    import duckdb

    from core.redact import MIXED_PAIR, secret_shapes

    con = duckdb.connect()
    either = f"{secret_shapes()}|{MIXED_PAIR}"
    return lambda text: con.execute("SELECT regexp_matches(?, ?)", [text, either]).fetchone()


# (name, what runs a text through the patterns): one line each; the screen and miner owners add theirs here.
ENTRY_POINTS: list[tuple[str, Callable[[str], object]]] = [
    ("redact", redact),
    ("redact_parts", lambda text: redact_parts([text[: len(text) // 2], text[len(text) // 2 :]])),
    ("personal", _PERSONAL.personal),
    ("redact_transcript", _transcript),
    ("render_session", _render),
    ("ingest_screen", _ingest_screen()),
    ("screen", lambda text: _uncached(text_holds, text)),
    ("miner", lambda text: _mined(text)),
]


def _mined(text: str) -> object:
    """The rules miner on a session whose prompt, command and failing output are `text`."""
    from core.miner import History, mine, observe
    from core.said import sentences

    call, result = f"t{len(text)}", text[: len(text) // 2]
    messages = [
        SessionMessage(seq=0, role="user", kind="text", is_prompt=True, text=text),
        SessionMessage(
            seq=1, role="assistant", kind="tool_use", tool_name="Bash", tool_use_id=call,
            tool_input=json.dumps({"command": text[len(text) // 2 :]}),
        ),
        SessionMessage(seq=2, role="tool", kind="tool_result", tool_use_id=call, is_error=True, text=result),
    ]  # fmt: skip
    parse_command.cache_clear()  # each call reads its text anew, as a new session would
    sentences.cache_clear()
    seen = observe(messages, "/w/app")
    return mine(seen, History.of([("s", seen)]), "app")


def _uncached(run: Callable[[str], object], text: str) -> object:
    parse_command.cache_clear()
    return run(text)


def _repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    """`head`, `unit` repeated, `tail`: `size` bytes of UTF-8 (a few less where a character would not fit)."""
    body = size - len(head.encode()) - len(tail.encode())
    times = body // max(len(unit.encode()), 1) + 1
    text = head + _cut(unit * times, max(body, 0)) + tail
    return _cut(text, size)


def _cut(text: str, size: int) -> str:
    """The longest start of `text` of at most `size` bytes of UTF-8."""
    return text.encode()[:size].decode("utf-8", "ignore")


# (name, size -> text): each of `size` bytes (UTF-8), as ordinary text is.
CRAFTED: list[tuple[str, Callable[[int], str]]] = [
    ("nested: run of a then !", lambda n: _repeat("a", n, tail="!")),
    ("nested: (ab) repeated", lambda n: _repeat("ab", n)),
    ("words: repeated word", lambda n: _repeat("mysql ", n)),
    ("words: password repeated", lambda n: _repeat("password ", n)),
    ("words: token repeated", lambda n: _repeat("token ", n)),
    ("words: twilio repeated", lambda n: _repeat("twilio ", n)),
    ("words: key value pairs", lambda n: _repeat("key = value, ", n)),
    ("sshpass: -p never comes", lambda n: _repeat("-o StrictHostKeyChecking=no ", n, head="sshpass ")),
    ("sshpass: flags that may be arguments", lambda n: _repeat("-o ", n, head="sshpass ")),
    ("sshpass: repeated", lambda n: _repeat("sshpass -o x ", n)),
    ("mysql: no -p on the line", lambda n: _repeat("x ", n, head="mysql ")),
    ("docker login: no -p", lambda n: _repeat("--user x ", n, head="docker login ")),
    ("echo: no pipe", lambda n: _repeat("echo x ", n)),
    ("sudo: no here-string", lambda n: _repeat("sudo -S x ", n)),
    ("htpasswd: repeated", lambda n: _repeat("htpasswd -b ", n)),
    ("assignment: placeholder values", lambda n: _repeat("password=$PW ", n)),
    ("assignment: None values", lambda n: _repeat("api_key: None ", n)),
    ("assignment: open quote", lambda n: _repeat("x", n, head='password="')),
    ("env: upper-case run", lambda n: _repeat("A", n)),
    ("env: names without =", lambda n: _repeat("DB_PASSWORD ", n)),
    ("url: colons, no @", lambda n: _repeat("a:", n, head="https://")),
    ("url: @ and colons", lambda n: _repeat("u:p@", n, head="postgres://")),
    ("curl -u: no colon", lambda n: _repeat("a", n, head="curl -u ")),
    ("pgpass: fields without end", lambda n: _repeat("a:1:b:c:", n)),
    ("key: BEGIN without END", lambda n: _repeat("x", n, head="-----BEGIN RSA PRIVATE KEY-----\n")),
    ("key: BEGIN repeated", lambda n: _repeat("-----BEGIN ", n)),
    ("key: key-like lines, no END", lambda n: _repeat("abcdefghijklmnopqrstuvwxyz+/" * 2 + "abcdefgh\n", n)),
    ("token: 31-char mixed runs", lambda n: _repeat("aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1d ", n)),
    ("token: one long mixed run", lambda n: _repeat("aB3dE5gH7j", n)),
    # Past the few-characters shortcut (18 distinct): a skewed run that is no key, and one cycled that is one.
    ("token: skewed run of 19 characters", lambda n: _repeat("a" * 30 + "B3dE5gH7jK9mN1pQ2sT", n)),
    ("token: 19 characters cycled", lambda n: _repeat("aB3dE5gH7jK9mN1pQ2s", n)),
    ("vendor: sk- prefixes", lambda n: _repeat("sk-ant-shortkey ", n)),
    ("vendor: AKIA runs", lambda n: _repeat("AKIA", n)),
    ("jwt: dots without parts", lambda n: _repeat("eyJabc.", n)),
    ("prose: password is, then words", lambda n: _repeat("the password is stored ", n)),
    ("base64: printable quads", lambda n: _repeat("SGVsbG8gd29ybGQh", n)),
    ("email: local part, no domain", lambda n: _repeat("a", n, tail="@")),
    ("email: @ repeated", lambda n: _repeat("a@", n)),
    ("home: /home/ repeated", lambda n: _repeat("/home/", n)),
    ("reminder: opened, never closed", lambda n: _repeat("<system-reminder>", n)),
    ("unicode: spaces", lambda n: _repeat("\u2003", n)),
    ("unicode: letters", lambda n: _repeat("é", n)),
    # The screen's and the miner's own near-misses: code spans, shell syntax, links, flags, paths.
    ("screen: backticks never closed", lambda n: _repeat("`a ", n)),
    ("screen: runs of backticks", lambda n: _repeat("``` ``", n)),
    ("screen: a command of many words", lambda n: _repeat("x ", n, head="`uv run pytest ", tail="`")),
    ("screen: pipes and flags", lambda n: _repeat("| -x ", n, head="`curl ")),
    ("screen: dashes", lambda n: _repeat("-", n)),
    ("screen: URL-like labels", lambda n: _repeat("a.", n, tail="/")),
    ("screen: hosts after @", lambda n: _repeat("x@y.", n)),
    ("screen: program words in prose", lambda n: _repeat("pip install ", n)),
    ("screen: override words", lambda n: _repeat("ignore previous ", n)),
    ("screen: braces", lambda n: _repeat("{a,", n)),
    # A pasted document of rules: every sentence cued (round 11: an 80,000-sentence prompt took a minute).
    ("miner: every sentence a rule", lambda n: _repeat("As always never push the file. ", n)),
]


def ordinary(size: int) -> str:
    """The bundled transcripts' own strings (prompts, tool output, code), joined and cut to `size`."""
    strings: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for path in sorted((ROOT / "data" / "samples").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                walk(json.loads(line))
            except ValueError:
                continue
    text = "\n".join(s for s in strings if len(s) > 40)
    # From the middle of the corpus: its head is one session's opening, not typical text.
    text = text[len(text) // 3 :]
    return _cut(text * (size // max(len(text.encode()), 1) + 1), size)


def ordinary_lessons(size: int) -> str:
    """Ordinary lessons (the labelled set's: commands in code spans, paths, flags), joined and cut to `size`: what
    the screen reads every day, so a crafted text is compared with the screen's ordinary work, not with prose."""
    labelled = json.loads((ROOT / "data" / "lessons" / "screen.json").read_text(encoding="utf-8"))["ordinary"]
    text = " ".join(labelled)
    return _cut(text * (size // max(len(text.encode()), 1) + 1), size)


def ordinary_commands(size: int) -> str:
    """The bundled transcripts' own shell commands, joined and cut to `size`: what the miner parses every day."""
    commands: list[str] = []
    for path in sorted((ROOT / "data" / "samples").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if '"command"' not in line:
                continue
            for block in (json.loads(line).get("message") or {}).get("content") or []:
                if isinstance(block, dict) and isinstance((block.get("input") or {}).get("command"), str):
                    commands.append(block["input"]["command"])
    text = " ; ".join(commands)
    return _cut(text * (size // max(len(text.encode()), 1) + 1), size)


# The entry points whose ordinary text is not transcript prose: the screen reads lessons, the miner commands.
ORDINARY: dict[str, Callable[[int], str]] = {"screen": ordinary_lessons, "miner": ordinary_commands}


def _timed(run: Callable[[str], object], text: str, budget: float) -> float:
    """CPU seconds per call (the child's own, so another process's burst does not count): best of a few batches of
    enough calls to last about `budget`. A first call is not timed: it pays what is paid once (a lazy import: numpy's,
    ~0.1 s, on the first long run; the forked child's copies of the pages it writes), which made the batches one call
    each, as cold as the first."""
    run(text)
    started = time.process_time()
    run(text)
    once = time.process_time() - started
    calls = max(1, int(budget / max(once, 1e-7)))
    best = once
    for _ in range(5 if once < budget else 2):
        started = time.process_time()
        for _ in range(calls):
            run(text)
        best = min(best, (time.process_time() - started) / calls)
    return best


def _child(run: Callable[[str], object], text: str, budget: float, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    out.put(_timed(run, text, budget))


def measure(run: Callable[[str], object], text: str, budget: float, timeout: float) -> float | None:
    """`_timed` in a forked child; None when it does not finish within `timeout` seconds (the child is stopped)."""
    return in_child(_child, (run, text, budget), timeout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="comma-separated sizes in bytes")
    parser.add_argument("--budget", type=float, default=0.05, help="CPU seconds per timed batch")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a measure is stopped")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the worst inputs and their text")
    parser.add_argument("--worst", type=int, default=3, help="crafted inputs per size measured again in rounds")
    parser.add_argument("--only", default="", help="entry points to run (comma-separated names)")
    parser.add_argument("--verbose", action="store_true", help="every crafted input's ratio, not only the worst")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    entries = [(n, r) for n, r in ENTRY_POINTS if not args.only or n in args.only.split(",")]
    for _, run in entries:  # every pattern compiled before the children fork
        run(ordinary(200))
    rows: list[Row] = []
    for size in sizes:
        plain = ordinary(size)
        # (ratio, entry, kind, run, ordinary text, crafted text): every crafted input once, its ratio to the entry's
        # ordinary text; the worst are measured again below, in interleaved rounds, for the verdict.
        found: list[tuple[float, str, str, Callable[[str], object], str, str]] = []
        print(f"size {size:,} bytes")
        for name, run in entries:
            text = ORDINARY[name](size) if name in ORDINARY else plain
            base = measure(run, text, args.budget, args.timeout)
            if base is None:
                print(f"  {name:18} ordinary text did not finish in {args.timeout:.0f} s")
                continue
            ratios = []
            for kind, make in CRAFTED:
                crafted = make(size)
                took = measure(run, crafted, args.budget, args.timeout)
                ratio = float("inf") if took is None else took / base
                ratios.append((ratio, kind, took))
                found.append((ratio, name, kind, run, text, crafted))
                if args.verbose:
                    shown = f">{args.timeout:.0f} s" if took is None else f"{took * 1e3:9.3f} ms"
                    print(f"    {name:18} {kind:32} {shown}  {ratio:8.2f}x")
            ratio, kind, took = max(ratios)
            median = statistics.median(r for r, _, _ in ratios)
            shown = f">{args.timeout:.0f} s" if took is None else f"{took * 1e3:.3f} ms"
            print(
                f"  {name:18} ordinary {base * 1e3:9.3f} ms; worst {ratio:8.2f}x ({kind}: {shown});"
                f" median {median:.2f}x"
            )
        if not found:
            continue
        found.sort(key=lambda f: -f[0])
        hung = [f for f in found if f[0] == float("inf")]
        if hung:  # a crafted input that never finished: no round can make that pass
            _, name, kind, *_ = hung[0]
            print(f"  worst at {size:,}: did not finish ({name}, {kind})  goal <= 2x: NOT met")
            rows.append(Row("regex", f"worst crafted at {size:,} B: {name}, {kind}", "x", [float("inf")], met=False))
            continue
        # The worst few again, each beside its ordinary text, in rounds: a burst of another process that made one
        # look worse lands on one sample, not on the median.
        worst = found[: max(1, args.worst)]
        samples: dict[int, tuple[list[float], list[float]]] = {i: ([], []) for i in range(len(worst))}
        for _ in range(max(3, args.rounds)):
            for i, (*_, run, text, crafted) in enumerate(worst):
                for side, what in ((samples[i][1], text), (samples[i][0], crafted)):
                    took = measure(run, what, args.budget, args.timeout)
                    side.append(float("inf") if took is None else took * 1e3)
        candidates = []
        for i, (_, name, kind, *_) in enumerate(worst):
            row = Row(
                "regex",
                f"worst crafted at {size:,} B: {name}, {kind}",
                "ms",
                samples[i][0],
                f"ordinary text ({name})",
                samples[i][1],
                goal="<= 2x",
            )
            row.met = (row.ratio or 0) <= 2.0 and float("inf") not in samples[i][1]
            candidates.append(row)
            print(f"    again, {len(samples[i][0])} rounds: {name}, {kind}: {row.ratio:.2f}x")
        verdict = max(candidates, key=lambda r: r.ratio or 0)
        met = "met" if verdict.met else "NOT met"
        print(f"  worst at {size:,}: {verdict.ratio:.2f}x ({verdict.what})  goal <= 2x: {met}")
        rows.append(verdict)
    emit(rows)


if __name__ == "__main__":
    main()
