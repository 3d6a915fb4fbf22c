"""Random tokens: the one-pass verdict and the verdicts shared by overlapping windows find what the plain way finds.

The plain way is written out here as it stood before the fast path: every run found by `finditer`, judged alone,
its entropy summed the reference way (`entropy`, the counts in the order the characters first appear).
"""

from __future__ import annotations

import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

import core.redact as redact_module
from core.patterns import Pattern
from core.random_token import ENTROPY_BITS, Verdicts, entropy, is_random_token, judge_join, token_spans
from core.redact import BOUNDARY_CHARS, Marked, boundary_spans, redact_parts, secret_spans
from tests.secret_kinds import HELD_OUT, KINDS, NEW_SHAPES

_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_CANDIDATE = Pattern(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
_RUN_BEFORE = frozenset(_TOKEN_CHARS + "=.")
_RUN_AFTER = frozenset(_TOKEN_CHARS + "=")
_HEX32 = Pattern(r"[0-9a-f]{32}")
_ID_PREFIXES = ("toolu_", "srvtoolu_", "msg_", "req_", "call_", "chatcmpl-", "resp_")


def _plain_verdict(token: str) -> bool:
    core = token.rstrip("=")
    chars = set(core)
    if not chars & set("ABCDEFGHIJKLMNOPQRSTUVWXYZ") or not chars & set("abcdefghijklmnopqrstuvwxyz"):
        return False
    if not chars & set("0123456789"):
        return False
    if core.startswith(("/", "~")) or core.startswith(_ID_PREFIXES):
        return False
    if "/" in chars and core.count("/") > 3 and all(len(seg) < 24 for seg in core.split("/")):
        return False
    if len(chars) <= math.floor(2**ENTROPY_BITS):
        return False
    return entropy(core, chars) >= ENTROPY_BITS


def _plain_token_spans(text: str) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    for m in _CANDIDATE.finditer(text):
        before, after = m.before(), m.after()
        if (before and before in _RUN_BEFORE) or (after and after in _RUN_AFTER):
            continue
        token = m.group() or ""
        if _plain_verdict(token):
            found.append((m.start(), m.end(), "[REDACTED:secret]"))
        elif len(token) == 34 and token[:2] in ("AC", "SK") and set(token[2:]) <= set("0123456789abcdef"):
            found.append((m.start(), m.end(), "[REDACTED:token]"))
            window = text[m.end() : m.end() + 160]
            for hit in _HEX32.finditer(window):
                a, b = m.end() + hit.start(), m.end() + hit.end()
                near = text[a - 1 : a] + window[hit.end() : hit.end() + 1]
                if not any(c.isascii() and c.isalnum() for c in near):
                    found.append((a, b, "[REDACTED:token]"))
                    break
    return found


# Runs as they come: random over a few characters or many, an alphabet cycled (each character as often: on the bar
# from 19 characters), one character most of the run, long enough for the one-pass count; with padding, paths, ids.
_ALPHABETS = st.lists(st.sampled_from(_TOKEN_CHARS), min_size=1, max_size=66, unique=True).map("".join)
_RUNS = st.one_of(
    st.builds(lambda a, n, r: "".join(r.choice(a) for _ in range(n)), _ALPHABETS, st.integers(28, 300), st.randoms()),
    st.builds(lambda a, n: (a * (n // len(a) + 1))[:n], _ALPHABETS, st.integers(28, 1500)),
    st.builds(lambda c, a, n: c * n + a, st.sampled_from(_TOKEN_CHARS), _ALPHABETS, st.integers(1, 200)),
    st.builds(lambda p, a: p + a, st.sampled_from(["/", "~", "toolu_", "msg_", "a/b/c/d/"]), _ALPHABETS),
).flatmap(lambda run: st.sampled_from(["", "=", "==", "==="]).map(lambda pad: run + pad))
_SECRETS = st.sampled_from([planted.text for planted in (*KINDS, *HELD_OUT, *NEW_SHAPES)])
_PROSE = st.sampled_from(["the key is in the vault", "see commit 3f2a9c1", "é naïve café", "ok.", "AC", "SK"])
_SIDS = st.builds(lambda k, h: f"{k}{h}", st.sampled_from(["AC", "SK"]), st.from_regex(r"[0-9a-f]{32}", fullmatch=True))
_TEXTS = st.lists(st.one_of(_RUNS, _SECRETS, _PROSE, _SIDS), min_size=1, max_size=6).flatmap(
    lambda pieces: st.sampled_from(["", " ", "\n", "=", ".", ", "]).map(lambda sep: sep.join(pieces))
)


@settings(max_examples=300, deadline=None)
@given(_RUNS)
@example("aB3dE5gH7jK9mN1pQ2s" * 60)  # 19 characters cycled, counted in one pass
@example(("a" * 30 + "B3dE5gH7jK9mN1pQ2sT") * 3)  # mostly one character: out on its share alone
@example("aB3dE5gH7jK9mN1pQ2sT" * 2)
def test_a_runs_verdict_is_the_plain_ones(run: str) -> None:
    """The entropy from one pass of counts (and the shortcuts before it) says what the reference sum says."""
    assert is_random_token(run) == _plain_verdict(run)


# Texts that are one short run (32 to 128 characters, as a block or a join often is): random over 19 or more
# characters, an alphabet cycled (on the bar from 19), mostly one character, paths and ids.
_SHORT_RUNS = _RUNS.filter(lambda run: run[-1:] != "=").map(lambda run: run[:128]).filter(lambda run: len(run) >= 32)


@settings(max_examples=300, deadline=None)
@given(_SHORT_RUNS)
@example(("aB3dE5gH7jK9mN1pQ2s" * 6)[:100])  # 19 characters cycled: just over the bar
@example(("aB3dE5gH7jK9mN1pQ2s" * 6)[:97])
@example(("a" * 30 + "B3dE5gH7jK9mN1pQ2sT") * 2)  # mostly one character: out, counted or not
@example("toolu_" + "aB3dE5gH7jK9mN1pQ2sT5vW7yZ9bC1d")
def test_a_short_text_that_is_one_run_is_judged_as_the_plain_way_judges_it(run: str) -> None:
    """The verdict on a short text that is one run (its counts at once, without the share test that spares a long
    run's counts) is the plain way's, kept or not."""
    shared: Verdicts = {}
    assert token_spans(run) == token_spans(run, shared) == _plain_token_spans(run)
    assert bool(shared.get(run)) == _plain_verdict(run)


# Halves of a run that are random tokens themselves (most draws from 40 or more characters are), or near the bar.
_WIDE = st.lists(st.sampled_from(_TOKEN_CHARS), min_size=19, max_size=66, unique=True).map("".join)
_HALVES = st.one_of(
    st.builds(lambda a, n, r: "".join(r.choice(a) for _ in range(n)), _WIDE, st.integers(32, 96), st.randoms()),
    st.builds(lambda a, n: (a * (n // len(a) + 1))[:n], _WIDE, st.integers(32, 96)),
    _RUNS,
)


@settings(max_examples=400, deadline=None)
@given(_HALVES, _HALVES)
@example("aB3dE5gH7jK9mN1pQ2sT5vW7yZ9bC1dXx0Uu", "Zz8Yy7Xx6Ww5Vv4Uu3Tt2Ss1Rr0QqPpOoNn9")
@example("aB3dE5gH7jK9mN1pQ2sT5vW7yZ9bC1d/x/y", "/zA1bB2cC3dD4eE5fF6gG7hH8iI9jJ0kK/q")  # the join a path: judged anew
def test_a_join_judged_from_its_halves_is_judged_as_from_scratch(left: str, right: str) -> None:
    """A run cut in two whose halves were judged on their own (as `redact_parts` judges each block) and then joined
    (`judge_join`) has the verdict the run judged from scratch has, and `token_spans` of the join finds what it
    finds with no verdict kept."""
    shared: Verdicts = {}
    token_spans(left, shared)
    token_spans(right, shared)
    judge_join(left, right, shared)
    joined = left + right
    if joined in shared:
        assert bool(shared[joined]) == is_random_token(joined) == _plain_verdict(joined)
    assert token_spans(joined, shared) == token_spans(joined) == _plain_token_spans(joined)


def test_a_join_of_two_random_halves_is_judged_without_a_count() -> None:
    """Two random halves: the join's verdict is kept from them (the test above would pass were it never)."""
    shared: Verdicts = {}
    left, right = "aB3dE5gH7jK9mN1pQ2sT5vW7yZ9bC1dXx0Uu", "Zz8Yy7Xx6Ww5Vv4Uu3Tt2Ss1Rr0QqPpOoNn9"
    token_spans(left, shared)
    token_spans(right, shared)
    judge_join(left, right, shared)
    assert shared[left + right] and is_random_token(left + right)


@settings(max_examples=300, deadline=None)
@given(_TEXTS, st.integers(0, 400))
def test_windows_sharing_verdicts_find_what_each_finds_alone_and_what_the_plain_way_finds(text: str, cut: int) -> None:
    """Overlapping windows of one text (its halves, the text, its halves again) judged with one `Verdicts` give the
    spans each gives alone, and those of the plain way: judging a run once changes nothing."""
    shared: Verdicts = {}
    for window in (text[:cut], text[cut:], text, text[:cut], text[cut:]):
        assert token_spans(window, shared) == token_spans(window) == _plain_token_spans(window)


@settings(max_examples=150, deadline=None)
@given(_TEXTS, st.integers(0, 400), st.integers(0, 400))
def test_the_blocks_of_a_message_are_redacted_as_scans_made_apart_redact_them(text: str, cut: int, more: int) -> None:
    """`redact_parts` (one `Verdicts` for every block and join) redacts each block as its own scan and each join's
    scan, made apart with no verdict shared, say."""
    parts = [text[:cut], text[cut : cut + more], text[cut + more :]]
    spans = [secret_spans(part) for part in parts]
    for i in range(len(parts) - 1):
        in_left, in_right = boundary_spans(parts[i], parts[i + 1])
        spans[i] += in_left
        spans[i + 1] += in_right
    assert redact_parts(parts)[0] == [redact_module._applied(p, s)[0] for p, s in zip(parts, spans, strict=True)]


def _plain_boundary_spans(left: str, right: str) -> tuple[list[Marked], list[Marked]]:
    """`boundary_spans` the plain way: both joins scanned, and both sides alone, every time."""
    cut = max(left.rfind("\n") + 1, len(left) - BOUNDARY_CHARS)
    stop = right.find("\n")
    tail, head = left[cut:], right[: min(len(right) if stop < 0 else stop, BOUNDARY_CHARS)]
    if not tail.strip() or not head.strip():
        return [], []
    n = len(tail)
    found: list[Marked] = []
    for gap in (0, 1):
        window = tail + " " * gap + head
        for start, end, marker in secret_spans(window):
            a = start if start < n else max(start - gap, n)
            b = end if end <= n else max(end - gap, n)
            if b > a and "[REDACTED" not in window[start:end]:
                found.append((a, b, marker))
    alone = {(a, b) for a, b, _ in secret_spans(tail)} | {(a + n, b + n) for a, b, _ in secret_spans(head)}
    in_left = [(cut + a, cut + min(b, n), m) for a, b, m in found if (a, b) not in alone and a < n]
    in_right = [(max(a, n) - n, b - n, "" if a < n else m) for a, b, m in found if (a, b) not in alone and b > n]
    return in_left, in_right


# A join's pieces: runs, secrets, SIDs and the bare 32 hex digits of an auth token, words of the rules.
_HEX = st.from_regex(r"[0-9a-f]{32}", fullmatch=True)
_WORDS = st.sampled_from(
    ["password is", "hunter2x!", "token:", "twilio", "net user bob", "-----BEGIN RSA PRIVATE KEY-----"]
)
_JOINED = st.lists(st.one_of(_RUNS, _SECRETS, _PROSE, _SIDS, _HEX, _WORDS), min_size=1, max_size=6).flatmap(
    lambda pieces: st.sampled_from(["", " ", "\n", ", "]).map(lambda sep: sep.join(pieces))
)


@settings(max_examples=300, deadline=None)
@given(_JOINED, st.integers(0, 400))
@example("aB3dE5gH7jK9mN1pQ2s" * 6, 50)  # two halves of one random run: the spaced join is not scanned
@example("x AC" + "0123456789abcdef" * 2 + "fedcba9876543210" * 2, 36)  # a SID, its auth token past the join
def test_a_join_finds_what_both_joins_and_both_sides_scanned_every_time_find(text: str, cut: int) -> None:
    """`boundary_spans`, which leaves out the spaced join where it can find only what each side finds alone, finds
    what scanning both joins and both sides finds; and `redact_parts` redacts so."""
    left, right = text[:cut], text[cut:]
    plain = _plain_boundary_spans(left, right)
    assert boundary_spans(left, right) == plain
    spans = [secret_spans(left) + plain[0], secret_spans(right) + plain[1]]
    assert redact_parts([left, right])[0] == [
        redact_module._applied(p, s)[0] for p, s in zip((left, right), spans, strict=True)
    ]


def test_spans_are_finditers_offsets_in_any_text() -> None:
    """`Pattern.spans` gives what `finditer` gives, as offsets into the `str` (a text not ASCII too)."""
    for text in ("", "x" * 40, "é" + "aB3" * 20 + " é " + "Zz9" * 15 + "==", "a" * 31 + " " + "b" * 32):
        assert list(_CANDIDATE.spans(text)) == [m.span() for m in _CANDIDATE.finditer(text)]
