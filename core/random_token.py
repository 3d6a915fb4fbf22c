"""Random tokens: a long run of token characters random enough to be a key (a bare AWS secret, a pasted token).

Hex (commit ids, checksums) stays below the entropy bar; words, paths and identifiers lack the mix of upper-case
letters, lower-case letters and digits. The run stands alone: no token character, `=` or `.` before it, no token
character or `=` after its padding. A Twilio SID (`AC`/`SK` + 32 hex digits) is found among the same runs, with the
auth token that follows it.

A run's verdict depends on the run alone, so a caller that looks at overlapping windows of one text (the blocks of a
message and the joins between them, `core.redact.redact_parts`) passes one `Verdicts` to every call and each distinct
short run is judged once; a run cut in two whose halves are random is judged from them (`judge_join`). The entropy
is a sum over the run's character counts, taken in one pass (`_counts`); only a run whose entropy lies within a
rounding error of the bar is summed again the reference way (`entropy`), so the verdict is that sum's to the last bit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from core.patterns import Pattern
from core.secret_rule import ascii_alnum

__all__ = ["ENTROPY_BITS", "Verdicts", "entropy", "is_random_token", "judge_join", "reads_past", "token_spans"]

ENTROPY_BITS = 4.2
_FEWEST_DISTINCT = math.floor(2**ENTROPY_BITS)  # a run of no more distinct characters is below it (log2 18 = 4.17)

# Offsets never read, so RE2 need not fill in any group (`capture=False`).
_CANDIDATE = Pattern(r"[A-Za-z0-9+/_\-]{32,}={0,2}", capture=False)
_RUN_BEFORE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-.")
_RUN_AFTER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
# Ids the agents' own formats are full of: random, but not secrets.
_ID_PREFIXES = ("toolu_", "srvtoolu_", "msg_", "req_", "call_", "chatcmpl-", "resp_")
_NOT_KEYS = ("/", "~", *_ID_PREFIXES)  # a path or an id

# run -> 0: no key; 1: a random token; 2: one whose entropy clears the bar by more than a rounding error (`_CLEAR`),
# for the runs of one text's windows (`token_spans`)
Verdicts = dict[str, int]
_CLEAR = 2
_REMEMBERED = 512  # runs up to this long are remembered: the windows of a join are ~200 characters

# Up to this many distinct characters, counting each with `str.count` (a C scan, ~0.3 ns a character) costs less
# than `Counter` (~22 ns a character: a 10 KB run of 19 characters took 0.22 ms); past ~60 they cost the same.
_COUNTED_ONE_BY_ONE = 48


def entropy(text: str, chars: set[str] | None = None) -> float:
    """Shannon entropy of `text` in bits a character, the reference sum: `chars`, when given, are its distinct
    characters. The counts are summed in the order the characters first appear, as `Counter` gives them, so both ways
    give the same float."""
    n = len(text)
    if chars is not None and len(chars) <= _COUNTED_ONE_BY_ONE:
        counts: Iterable[int] = [text.count(c) for c in sorted(chars, key=text.index)]
    else:
        counts = Counter(text).values()
    return -sum(k / n * math.log2(k / n) for k in counts)


# `k * log2(k)` for the counts of a run shorter than the table: the entropy is `log2(n) - sum(k log2 k) / n`.
_TABLE = 1024
_K_LOG_K = [0.0] + [k * math.log2(k) for k in range(1, _TABLE)]
# The two sums differ by a few units in the last place (1e-15 bits for a run of a million characters); a run nearer
# the bar than this is summed the reference way.
_ROUNDING = 1e-9
_BELOW_BAR = ENTROPY_BITS - _ROUNDING
_ABOVE_BAR = ENTROPY_BITS + _ROUNDING
# From this many characters times distinct characters on, one pass of numpy's `bincount` (~1 ns a character and ~5 us
# to call) costs less than a `str.count` a character (19 of them over 5 KB: 30 us).
_ONE_PASS_FROM = 20_000


def _reaches_bar(run: str, chars: set[str]) -> int:
    """Whether `entropy(run) >= ENTROPY_BITS`, to the last bit of the reference sum: 0 no, 1 yes, `_CLEAR` yes by more
    than `_ROUNDING`. The entropy is `log2(n) - sum(k log2 k) / n` over the counts `k` of `run`'s characters
    (`chars`; ASCII, as a run is)."""
    n = len(run)
    if n * len(chars) >= _ONE_PASS_FROM:
        import numpy as np  # only for a long run: the module is imported by every command that redacts

        counts = np.bincount(np.frombuffer(run.encode("ascii"), dtype=np.uint8))
        held = counts[counts > 0].astype(np.float64)
        k_log_k = float(np.dot(held, np.log2(held)))
    elif n < _TABLE:
        k_log_k = sum(map(_K_LOG_K.__getitem__, map(run.count, chars)))
    else:
        k_log_k = sum(k * math.log2(k) for k in map(run.count, chars))
    bits = math.log2(n) - k_log_k / n
    if abs(bits - ENTROPY_BITS) > _ROUNDING:
        return _CLEAR if bits > ENTROPY_BITS else 0
    return 1 if entropy(run, chars) >= ENTROPY_BITS else 0


_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")
_HEAD = 128  # how much of a run `_characters` reads one by one


def _characters(run: str) -> set[str]:
    """The distinct characters of `run` (ASCII, as a candidate is). A set built character by character costs ~5 ns a
    character (50 us for a run of 10 KB, most of the cost of a text of repeated base64 quads); so for a long run only
    its head is, and the rest is read only for characters the head lacks: deleting the head's from its bytes is one
    C pass (a repeated unit leaves nothing)."""
    if len(run) <= _HEAD:
        return set(run)
    head = set(run[:_HEAD])
    rest = run.encode("ascii").translate(None, "".join(head).encode("ascii"))
    return head | set(rest.decode("ascii")) if rest else head


def is_random_token(token: str, chars: set[str] | None = None) -> bool:
    """Whether a run of token characters (and its `=` padding) is random enough to be a key. `chars`: the distinct
    characters of the run without its padding, when the caller has them."""
    return _level(token, chars) > 0


def _level(token: str, chars: set[str] | None) -> int:
    """`is_random_token` as a `Verdicts` value: 0, 1, or `_CLEAR`."""
    core = token.rstrip("=")
    if chars is None:
        chars = set(core) if len(core) <= _HEAD else _characters(core)
    # a digit, an upper-case and a lower-case letter (a candidate is ASCII)
    if chars.isdisjoint(_UPPER) or chars.isdisjoint(_LOWER) or chars.isdisjoint(_DIGITS):
        return 0
    if core.startswith(_NOT_KEYS):
        return 0  # a path or an id
    if "/" in chars and core.count("/") > 3 and all(len(seg) < 24 for seg in core.split("/")):
        return 0  # a relative path, however odd its names
    # Entropy is at most log2 of the distinct characters: with 18 or fewer (log2 18 = 4.17) the run cannot reach the
    # bar, and counting them is cheaper than the sum of logs (a repeated unit, `aB3dE5gH7j` ten times, is no key)
    if len(chars) <= _FEWEST_DISTINCT:
        return 0
    # One character's share `p` bounds the entropy too: at most h(p) + (1 - p) log2(d - 1) for d distinct characters
    # (the rest at its most even). A run that is mostly one character (`aaaa...B3dE5`) fails it uncounted.
    # (Tried only past a share of 1/16, where it may fail: in a run of characters about as common it costs its logs.)
    n = len(core)
    k = core.count(core[0])
    if n > k > n / 16:
        p = k / n
        if -p * math.log2(p) - (1 - p) * math.log2(1 - p) + (1 - p) * math.log2(len(chars) - 1) < _BELOW_BAR:
            return 0
    return _reaches_bar(core, chars)


# A Twilio account or API key SID (`AC`/`SK` + 32 lower-case hex), and the auth token that follows it in code
# (`Client("AC...", "<token>")`); found among the 32-character runs `_CANDIDATE` scans anyway.
_HEX = frozenset("0123456789abcdef")
_HEX32 = Pattern(r"[0-9a-f]{32}")


def _twilio_sid(token: str) -> bool:
    return len(token) == 34 and token[:2] in ("AC", "SK") and _HEX.issuperset(token[2:])


def _twilio_spans(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    spans = [(start, end, "[REDACTED:token]")]
    window = text[end : end + 160]  # the token follows within 160 characters; the window is its end
    for token in _HEX32.finditer(window):
        a, b = end + token.start(), end + token.end()
        if not ascii_alnum(text[a - 1 : a]) and not ascii_alnum(window[token.end() : token.end() + 1]):
            spans.append((a, b, "[REDACTED:token]"))
            break
    return spans


def reads_past(text: str) -> bool:
    """Whether `token_spans` of `text`, a space and more text may find more in `text`'s part than `token_spans(text)`
    finds, or in the more text's part more than it finds alone. A run ends at the space, so each part's runs are its
    own; only a Twilio SID in `text` looks past it, for the auth token that follows."""
    return "AC" in text or "SK" in text


def _no_run_scan(text: str, chars: set[str] | None) -> bool:
    """Whether no run of `text` can be a random token or a Twilio SID, said by the text as a whole (where that is
    cheap): a run has no more distinct characters than its text (18 or fewer: below the entropy bar), and a SID
    starts `AC` or `SK`. A text of a few characters repeated (base64 quads, a mixed-case unit) is one long run, or
    several, and each search for one and the checks on it cost more than this (`redact_parts` reads each block and
    each join). `chars`: the distinct characters of a short text, when the caller has them."""
    chars = _few_characters(text) if chars is None else chars if len(chars) <= _FEWEST_DISTINCT else None
    if chars is None:
        return False
    # (a search for two characters costs ~1 ns a character: only where the text holds both)
    return not ({"A", "C"} <= chars and "AC" in text) and not ({"S", "K"} <= chars and "SK" in text)


def _few_characters(text: str) -> set[str] | None:
    """The distinct characters of `text` where there are at most `_FEWEST_DISTINCT`; None where there are more, or
    where saying so is not cheap (a long text not ASCII, or whose new characters keep coming after a few rounds)."""
    if len(text) <= _HEAD:
        chars = set(text)
        return chars if len(chars) <= _FEWEST_DISTINCT else None
    # a shorter head first: ordinary text has more than 18 distinct characters in its first 64 (99 in 100 texts)
    chars = set(text[:64])
    if len(chars) > _FEWEST_DISTINCT or not text.isascii():
        return None
    rest = text.encode("ascii")
    for _ in range(3):  # each round a C pass deleting the characters seen, then the next head's looked at
        rest = rest.translate(None, "".join(chars).encode("ascii"))
        if not rest:
            return chars
        chars |= set(rest[:_HEAD].decode("ascii"))
        if len(chars) > _FEWEST_DISTINCT:
            return None
    return None


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")  # `_CANDIDATE`'s
_TOKEN_BYTES = "".join(sorted(_TOKEN_CHARS)).encode("ascii")


def _whole_run(text: str, chars: set[str] | None) -> list[tuple[int, int]]:
    """`[(0, len(text))]` where `text` is one run of token characters, 32 or more, without padding: `_CANDIDATE`'s
    one match, said without its search (on a run RE2 goes over it twice, ~4 ns a character: 22 us for a block of
    5 KB of one run, twice the search of ordinary text); else [] (the search says). `chars`: the distinct characters
    of a short text, when the caller has them."""
    if len(text) < 32:
        return []
    if chars is not None:
        return [(0, len(text))] if _TOKEN_CHARS.issuperset(chars) else []
    # Ordinary text holds a space or a sign in its first 32 characters: only a text that may be one run is read
    # whole, in one C pass deleting the token characters.
    if not text.isascii() or not _TOKEN_CHARS.issuperset(text[:32]):
        return []
    return [] if text.encode("ascii").translate(None, _TOKEN_BYTES) else [(0, len(text))]


def _one_run(text: str, chars: set[str], verdicts: Verdicts | None) -> list[tuple[int, int, str]]:
    """`token_spans` of a short text that is one run of token characters (`chars`, more than `_FEWEST_DISTINCT`),
    without padding: the run is the text, nothing stands beside it, and it is no Twilio SID (a SID has at most 18
    distinct characters). Without the general way's search and loop: ~0.4 us of the ~4.9 a 100-character run cost."""
    random = _short_level(text, chars)
    if verdicts is not None:  # a short text: no longer than `_REMEMBERED`
        verdicts[text] = random
    return [(0, len(text), "[REDACTED:secret]")] if random else []


def _short_level(run: str, chars: set[str]) -> int:
    """`_level` of a run of at most `_HEAD` token characters without padding, more than `_FEWEST_DISTINCT` of them
    distinct (`chars`): its tests in the same order, but the share of its first character, which only spares the
    counts of a long run (it bounds the entropy from above, so the counts give the same verdict), and the entropy
    from the counts at once: ~0.8 us less on a 100-character run (a block that is a pasted key is this)."""
    if chars.isdisjoint(_UPPER) or chars.isdisjoint(_LOWER) or chars.isdisjoint(_DIGITS) or run.startswith(_NOT_KEYS):
        return 0
    if "/" in chars and run.count("/") > 3 and all(len(seg) < 24 for seg in run.split("/")):
        return 0
    n = len(run)
    bits = _LOG2[n] - sum(map(_K_LOG_K.__getitem__, map(run.count, chars))) / n
    if bits > _ABOVE_BAR:
        return _CLEAR
    if bits < _BELOW_BAR:
        return 0
    return 1 if entropy(run, chars) >= ENTROPY_BITS else 0


_LOG2 = [0.0, *(math.log2(n) for n in range(1, _HEAD + 1))]


def judge_join(left: str, right: str, verdicts: Verdicts) -> None:
    """Judge the run `left + right` from its sides, where each is a run `verdicts` holds as clear of the bar
    (`_CLEAR`), without padding: the join is one run, and a random token without a count. Its characters' shares are
    the mix of its sides' (weighted by length) and entropy is concave, so its entropy is at least the sides' weighted
    mean: clear of the bar too. Its other tests are its left side's (the three kinds of character, the prefixes of ids
    and paths; it holds more distinct characters), but for a path's slashes: a join with more than three is judged
    the usual way. Recorded as 1, not `_CLEAR` (no margin is carried from join to join)."""
    if verdicts.get(left) == _CLEAR and verdicts.get(right) == _CLEAR and left[-1] != "=" and right[-1] != "=":
        joined = left + right
        if len(joined) <= _REMEMBERED and joined not in verdicts and joined.count("/") <= 3:
            verdicts[joined] = 1


def token_spans(text: str, verdicts: Verdicts | None = None) -> list[tuple[int, int, str]]:
    """The random tokens and Twilio SIDs (with their auth tokens) in `text`, in order, as (start, end, marker).

    `verdicts`: the runs already judged, for a caller that looks at overlapping windows of one text; the runs judged
    here are added to it.
    """
    n = len(text)
    if verdicts and n <= _REMEMBERED:
        known = verdicts.get(text)
        if known is not None:  # the text is a run judged before (a block, a join): the whole text, nothing beside it
            return [(0, n, "[REDACTED:secret]")] if known else _twilio_spans(text, 0, n) if _twilio_sid(text) else []
    # A short text's characters are read once: for the shortcut, and for its run when the text is one (a block, a join)
    chars = set(text) if n <= _HEAD else None
    if chars is not None and n >= 32 and len(chars) > _FEWEST_DISTINCT and _TOKEN_CHARS.issuperset(chars):
        return _one_run(text, chars, verdicts)
    if _no_run_scan(text, chars):
        return []
    found: list[tuple[int, int, str]] = []
    for start, end in _whole_run(text, chars) or _CANDIDATE.spans(text):
        if (start and text[start - 1] in _RUN_BEFORE) or (end < n and text[end] in _RUN_AFTER):
            continue  # a part of a longer run, or of a dotted name
        token = text[start:end]
        random = verdicts.get(token) if verdicts is not None else None
        if random is None:
            whole = end - start == n and text[-1] != "="  # the run is the text, no padding: its characters are known
            random = _level(token, chars if whole else None)
            if verdicts is not None and len(token) <= _REMEMBERED:
                verdicts[token] = random
        if random:
            found.append((start, end, "[REDACTED:secret]"))
        elif _twilio_sid(token):
            found += _twilio_spans(text, start, end)
    return found
