"""The conditions the redactor relies on, and what it does where Python's `re` and RE2 part ways.

Ingest asks DuckDB which records hold a rule's shape and runs only those rules there: wherever a rule finds a
secret, its shape (RE2, in DuckDB) matches and one of its triggers is in the text. The rules are RE2 patterns whose
lookarounds became checks in Python (a bounded look at the match and the characters beside it).
"""

from __future__ import annotations

import base64
import random
import re

import duckdb
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import core.redact as redact_module
from core import random_token
from core.errors import ConfigError
from core.redact import (
    BOUNDARY_CHARS,
    RULES,
    Redactor,
    Rule,
    boundary_spans,
    redact,
    redact_boundary,
    redact_parts,
    rule_shapes,
    secret_shapes,
    secret_spans,
)
from core.secret_rule_set import RuleSet
from tests.secret_kinds import HELD_OUT, KINDS, NEW_SHAPES


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


def _screens(con: duckdb.DuckDBPyConnection, pattern: str, text: str) -> bool:
    row = con.execute("SELECT regexp_matches(?, ?)", [text, pattern]).fetchone()
    return bool(row and row[0])


def _lower(text: str) -> str:  # as the redactor lower-cases: ASCII letters only
    return "".join(c.lower() if c.isascii() else c for c in text)


def _finds(rule: Rule, text: str) -> bool:
    return bool(rule.spans(_lower(text) if rule.ignore_case else text))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _b64(user: str, password: str, urlsafe: bool) -> str:
    raw = f"{user}:{password}".encode()
    return (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode()


# What the base64 rule is for: `user:password` encoded, among other text (its pattern alone draws no such thing).
_BASE64_CREDENTIALS = st.builds(
    lambda before, user, password, urlsafe, after: before + _b64(user, password, urlsafe) + after,
    st.text(max_size=6),
    st.from_regex(r"[A-Za-z0-9._@+\-]{1,20}", fullmatch=True),
    st.from_regex(r"[!-9;-~][!-~]{2,30}", fullmatch=True),
    st.booleans(),
    st.text(max_size=6),
)


def _drawn(rule: Rule) -> st.SearchStrategy[str]:
    """Texts from the rule's own pattern (read by Python's parser too: the rules are written in the syntax the two
    engines share), or from its shape where the pattern alone lacks the context its check wants (Twilio's word)."""
    if rule.name == "base64_credential":
        return _BASE64_CREDENTIALS
    source = rule.shape if rule.name == "twilio_token" and rule.shape else rule.pattern.source
    flags = re.IGNORECASE if rule.ignore_case else 0
    flags |= re.DOTALL if "s" in rule.pattern.flags else 0
    flags |= re.MULTILINE if "m" in rule.pattern.flags else 0
    return st.from_regex(re.compile(source, flags))


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
@given(data=st.data())
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@pytest.mark.slow
def test_a_rule_shape_matches_every_text_the_rule_finds_a_secret_in(
    con: duckdb.DuckDBPyConnection, rule: Rule, data: st.DataObject
) -> None:
    """Texts drawn from the rule's pattern (exotic Unicode around and inside it), and the same texts in other cases:
    where the rule finds a secret, its shape and the combined `secret_shapes()` match."""
    text = data.draw(_drawn(rule))
    text = data.draw(st.sampled_from([text, text.swapcase(), text.upper()]))
    assume(_encodable(text) and _finds(rule, text))
    assert _screens(con, rule_shapes()[RULES.index(rule)], text)
    assert _screens(con, secret_shapes(), text)


@pytest.mark.slow
@pytest.mark.parametrize("rule", [r for r in RULES if r.triggers], ids=[r.name for r in RULES if r.triggers])
@given(data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_every_match_of_a_rule_holds_one_of_its_triggers(rule: Rule, data: st.DataObject) -> None:
    """`Rule.triggers` are a necessary condition (`redact` skips a rule whose triggers a text lacks): texts drawn
    from the rule's own pattern, Unicode whitespace and all, hold one wherever the rule finds a secret."""
    text = data.draw(_drawn(rule))
    text = data.draw(st.sampled_from([text, text.swapcase(), text.upper()]))
    assume(_finds(rule, text))
    assert any(t in _lower(text) for t in rule.triggers)


def _shaped(con: duckdb.DuckDBPyConnection, text: str) -> tuple[Rule, ...]:
    """The rules whose shapes `text` holds, in `RULES` order: what ingest hands the redactor for a record."""
    shapes = rule_shapes()
    query = "SELECT [" + ", ".join(f"regexp_matches($t, $r{i})" for i in range(len(shapes))) + "]"
    row = con.execute(query, {"t": text} | {f"r{i}": shape for i, shape in enumerate(shapes)}).fetchone()
    return tuple(rule for rule, hit in zip(RULES, row[0] if row else [], strict=True) if hit)


_PLANTED = [k.text for k in [*KINDS, *HELD_OUT, *NEW_SHAPES]]


@pytest.mark.slow
@given(data=st.data())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_rules_whose_shapes_a_text_holds_find_all_that_every_rule_finds(
    con: duckdb.DuckDBPyConnection, data: st.DataObject
) -> None:
    """Ingest runs only the rules whose shapes a record holds: on texts mixing several rules' secrets (drawn from
    their patterns, and the planted kinds in their sentences) they find exactly the spans all the rules find."""
    pieces = data.draw(
        st.lists(
            st.one_of(
                st.sampled_from(RULES).flatmap(_drawn),
                st.sampled_from(_PLANTED),
                st.text(max_size=8),
            ),
            min_size=1,
            max_size=4,
        )
    )
    text = data.draw(st.sampled_from(["", " ", "\n", "x"])).join(pieces)
    assume(_encodable(text))
    assert secret_spans(text, rules=_shaped(con, text)) == secret_spans(text)


def test_every_planted_secret_is_screened(con: duckdb.DuckDBPyConnection) -> None:
    """Each planted kind in its sentence: where a rule finds it, the screen finds it."""
    found = [k for k in [*KINDS, *HELD_OUT, *NEW_SHAPES] if any(_finds(rule, k.text) for rule in RULES)]
    assert len(found) > 60
    assert [k.text for k in found if not _screens(con, secret_shapes(), k.text)] == []


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("password=$DB_PASSWORD", "$DB_PASSWORD"),  # a variable names the secret
        ("api_key: None", "None"),
        ("token = os.environ['TOKEN']", "os.environ"),
        ("password: getpass()", "getpass()"),
        ("secret=12345 ", "12345"),  # a number
        ("--password <your-password>", "<your-password>"),
        ("postgres://app:[REDACTED:password]@db/app", "[REDACTED:password]"),  # a marker is never redacted again
        ("openssl rsa -passin env:KEY_PW -in k.pem", "env:KEY_PW"),
        ("echo $PW | sudo -S true", "$PW"),
        ("the token is expired", "expired"),
        ("the password is stored in ~/.pgpass", "stored"),
        ("the key is config/keys.json", "config/keys.json"),
        ("the token is GITHUB_TOKEN", "GITHUB_TOKEN"),
        ("the key is sha256", "sha256"),
        ("unzip -p archive.zip file.txt", "archive.zip"),  # lower-case `-p` writes to stdout
        ("htpasswd -c .htpasswd admin", "admin"),  # no `-b`: the password is asked for
        ("at 12:30:45:123:456", "456"),  # five fields of digits: a time, not a .pgpass line
        ("git@github.com:acme/app.git", "acme"),
        ("https://example.com/?sig=abc", "sig=abc"),  # too short for a signature
    ],
)
def test_what_only_names_a_secret_or_is_no_secret_is_kept(text: str, kept: str) -> None:
    clean, _ = redact(text)
    assert kept in clean, (text, clean)


@pytest.mark.parametrize(
    "text",
    [
        "AKIAABCDEFGHIJKLMNOP AKIAQRSTUVWXYZ012345",  # `\\b` before each: the first match leaves the space
        "sk-ant-api03-AAAAAAAAAAAAAAAAAAAA sk-ant-api03-BBBBBBBBBBBBBBBBBBBB",
        "password=$PW password=Wd8kQz2mPx4v",  # a value that names a secret is passed over, the next one is not
    ],
)
def test_a_match_passed_over_or_taken_does_not_hide_the_next(text: str) -> None:
    last = text.split()[-1].split("=")[-1]
    assert last not in redact(text)[0]


def test_user_names_side_by_side_are_each_masked() -> None:
    """`ls -l` prints the owner and the group: `alice alice`. The words' lookarounds are checks on the characters
    beside a match, so one name's space is still there for the next."""
    redactor = Redactor(names=("alice",))
    assert redactor.personal("-rw-r--r-- 1 alice alice 120 notes") == (
        "-rw-r--r-- 1 [REDACTED:personal] [REDACTED:personal] 120 notes",
        2,
    )
    assert redactor.personal("malice and alice-x and alice.txt")[0] == "malice and alice-x and [REDACTED:personal].txt"


def test_personal_paths_as_before() -> None:
    redactor = Redactor()
    text = "cd /Users/dain/src && ls /home/bob/x /root/.ssh x/home/y -Users-dain-proj- C:\\Users\\Dain\\x bob@acme.io"
    assert redactor.personal(text)[0] == ("cd ~/src && ls ~/x ~/.ssh x/home/y -Users-USER-proj- ~\\x [REDACTED:email]")


@pytest.mark.parametrize("pattern", ["(?<=x)y", "(a)\\1", "a{2000}", "(unclosed"])
def test_a_personal_pattern_re2_cannot_run_is_one_line(pattern: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Redactor(extra=(pattern,))
    message = str(caught.value)
    assert message.startswith(f"personal_patterns entry `{pattern}` is not a pattern RE2 can run (")
    assert "\n" not in message


def test_a_nested_quantifier_is_a_personal_pattern_like_any_other() -> None:
    """`(a+)+$` takes exponential time on Python's `re`; on RE2 it is an ordinary, linear pattern."""
    redactor = Redactor(extra=("(a+)+$",))
    assert redactor.personal("x" + "a" * 200_000)[1] == 1


@pytest.mark.parametrize(
    ("left", "right", "gone"),
    [
        ("my password is", "hunter2x!", "hunter2x!"),
        ("key sk_live_4eC39HqLyj", "WdarjtT1zdp7dc ok", "WdarjtT1zdp7dc"),
        ("run: sshpass -p", "Wd8kQz2mPx4v ssh deploy@host", "Wd8kQz2mPx4v"),
        ("export DB_PASSWORD=", "Wd8kQz2mPx4v", "Wd8kQz2mPx4v"),
        ("the build", "passed in 4 minutes", None),
    ],
)
def test_a_secret_continued_in_the_next_text_is_redacted_on_both_sides(left: str, right: str, gone: str | None) -> None:
    new_left, new_right, n = redact_boundary(left, right)
    if gone is None:
        assert n == 0 and (new_left, new_right) == (left, right)
    else:
        assert n == 1 and gone not in new_left + new_right and "[REDACTED:" in new_left + new_right
        assert redact_boundary(new_left, new_right)[2] == 0  # what is replaced is not found again


_MASKED_TEXTS = [
    "run the tests with `uv run pytest`",
    "the key is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "logs are in /home/alice/project/logs",
    "ask alice before pushing",
    "set AWS_SECRET_ACCESS_KEY=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "lint with `ruff check`",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_masked_playbook_is_each_text_redacted_whatever_was_passed_before(data: st.DataObject) -> None:
    # What is stored and exported: texts passed before (by this run's sessions, or this process's earlier runs and
    # exports) are not scanned again, and the playbook is the same as each entry redacted afresh.
    from core.models import Entry, Playbook
    from core.operations import apply_operations
    from core.redact import mask_playbook

    redactor = data.draw(st.sampled_from([Redactor(), Redactor(home="/home/alice", names=("alice",))]))
    entries = data.draw(st.lists(st.sampled_from(_MASKED_TEXTS), max_size=8))
    current = Playbook(sections={"OTHERS": [Entry(name=f"oth-{i:03d}", text=t) for i, t in enumerate(entries)]})
    clean: set[str] = set()
    for _ in range(data.draw(st.integers(1, 5))):
        ops = data.draw(
            st.lists(
                st.one_of(
                    st.fixed_dictionaries({"type": st.just("ADD"), "text": st.sampled_from(_MASKED_TEXTS)}),
                    st.fixed_dictionaries(
                        {
                            "type": st.just("DELETE"),
                            "target_id": st.sampled_from([e.name for _, e in current.entries()] or ["x"]),
                        }
                    ),
                ),
                max_size=3,
            )
        )
        current, _ = apply_operations(current, ops)
        want = {
            s: [e.model_copy(update={"text": redactor.text(e.text)}) for e in v] for s, v in current.sections.items()
        }
        for masked in (mask_playbook(current, redactor, clean=clean), mask_playbook(current, redactor)):
            assert masked.sections == want
            assert (masked is current) == (want == current.sections)  # the very object when nothing changed
        current = mask_playbook(current, redactor, clean=clean)


# Secrets of every kind the redactor knows (drawn from each rule's pattern, the planted kinds in their sentences, random
# tokens), near-misses (a trigger with nothing after it, a run one character short) and noise, in any order.
_MIXED_TEXT = st.lists(
    st.one_of(
        st.sampled_from(RULES).flatmap(_drawn),
        st.sampled_from(_PLANTED),
        st.from_regex(r"[A-Za-z0-9+/_\-]{30,34}", fullmatch=True),
        st.sampled_from(sorted({t for rule in RULES for t in rule.triggers})),
        st.text(max_size=8),
    ),
    max_size=4,
).flatmap(lambda pieces: st.sampled_from(["", " ", "\n", ":", "@"]).map(lambda sep: sep.join(pieces)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_MIXED_TEXT)
def test_the_rules_a_text_triggers_find_what_every_rule_finds(text: str) -> None:
    """Skipping the rules whose patterns a text lacks, and the random-token scan where no run can be one, changes
    nothing: the spans are those of every rule run and every run looked at."""
    assume(_encodable(text))
    assert secret_spans(text) == secret_spans(text, rules=RULES)


_RULE_SET = RuleSet(RULES, ())  # the redactor's rules, as it chooses among them


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_MIXED_TEXT | _MIXED_TEXT.map(str.swapcase) | st.text(alphabet=list('kK\u212aſsS:-_ /"\\é'), max_size=24))
def test_every_rule_that_finds_a_secret_is_among_those_a_text_is_read_with(text: str) -> None:
    """One set pass stands for each rule's own search: a rule left out finds nothing in the text, in any case and
    beside characters that fold to ASCII ones (the Kelvin sign, the long s)."""
    chosen = {rule.name for rule, _ in _RULE_SET.chosen(text)[0]}
    assert {rule.name for rule in RULES if _finds(rule, text)} <= chosen


# Texts of token characters alone (a pasted key, a blob, a block that is one run), which the set pass reads without its
# case-blind half: secrets of each kind drawn from each rule's pattern (those that are such runs as they are, and the
# others with every other character dropped, near-misses mostly), the planted secrets, random runs, Twilio's word
# before its hex, a SID and its token.
_NOT_TOKEN = re.compile(r"[^A-Za-z0-9+/_\-]")
_TOKEN_PIECES = st.one_of(
    st.sampled_from(RULES).flatmap(_drawn).map(lambda text: _NOT_TOKEN.sub("", text)),
    st.sampled_from([_NOT_TOKEN.sub("", planted.secret) for planted in (*KINDS, *HELD_OUT, *NEW_SHAPES)]),
    st.from_regex(r"[A-Za-z0-9+/_\-]{1,80}", fullmatch=True),
    st.from_regex(r"(?i:twilio)[A-Za-z0-9_]{0,12}[+/_\-]?[0-9a-fA-F]{32}", fullmatch=True),
    st.from_regex(r"(?:AC|SK)[0-9a-f]{32}[0-9a-f]{32}", fullmatch=True),
)
_TOKEN_TEXT = st.lists(_TOKEN_PIECES, min_size=1, max_size=4).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_TOKEN_TEXT | _TOKEN_TEXT.map(str.swapcase))
@example("aB3dE5gH7jK9mN1pQ2s" * 5 + "aB3dE")  # the regex bench's run of 19 characters cycled
@example("TWILIO_AUTH_TOKEN_" + "0123456789ABCDEF" * 2)  # Twilio's word and its hex: case-blind, and found
def test_a_text_of_token_characters_alone_is_redacted_as_every_rule_redacts_it(text: str) -> None:
    """The set pass reads a text of token characters alone without the rules that need another character (the
    case-blind half of its rules but Twilio's): every rule that finds a secret in it is among those chosen, and the
    spans and the text redacted are those of every rule run."""
    assert not _NOT_TOKEN.search(text)
    chosen = {rule.name for rule, _ in _RULE_SET.chosen(text)[0]}
    assert {rule.name for rule in RULES if _finds(rule, text)} <= chosen
    assert secret_spans(text) == secret_spans(text, rules=RULES)
    assert redact(text) == redact(text, rules=RULES)


def _boundary_by_the_letter(left: str, right: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """`boundary_spans` as its docstring says it, every side scanned alone: found in a join, in neither side alone."""
    cut = max(left.rfind("\n") + 1, len(left) - BOUNDARY_CHARS)
    stop = right.find("\n")
    tail, head = left[cut:], right[: min(len(right) if stop < 0 else stop, BOUNDARY_CHARS)]
    if not tail.strip() or not head.strip():
        return [], []
    n = len(tail)
    alone = {(a, b) for a, b, _ in secret_spans(tail)} | {(a + n, b + n) for a, b, _ in secret_spans(head)}
    in_left, in_right = [], []
    for gap in (0, 1):
        window = tail + " " * gap + head
        for start, end, marker in secret_spans(window):
            a = start if start < n else max(start - gap, n)
            b = end if end <= n else max(end - gap, n)
            if b <= a or "[REDACTED" in window[start:end] or (a, b) in alone:
                continue
            if a < n:
                in_left.append((cut + a, cut + min(b, n), marker))
            if b > n:
                in_right.append((max(a, n) - n, b - n, "" if a < n else marker))
    return in_left, in_right


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_MIXED_TEXT, _MIXED_TEXT)
def test_a_boundary_scans_a_side_alone_only_when_that_changes_the_answer(left: str, right: str) -> None:
    """A side is scanned alone only when a span found in a join lies within it, and not again when its spans are
    known (a side that is its line whole); the spans are those of scanning both sides every time, and a message's
    blocks are redacted the same."""
    assume(_encodable(left) and _encodable(right))
    assert boundary_spans(left, right) == _boundary_by_the_letter(left, right)
    known = (secret_spans(left), secret_spans(right))
    assert boundary_spans(left, right, known=known) == _boundary_by_the_letter(left, right)
    in_left, in_right = _boundary_by_the_letter(left, right)
    texts, _ = redact_parts([left, right])
    assert texts == [
        redact_module._applied(left, [*secret_spans(left), *in_left])[0],
        redact_module._applied(right, [*secret_spans(right), *in_right])[0],
    ]


# Runs of token characters as a crafted text repeats them: random over a few characters, or a cycle of its alphabet
# (each character as often: random enough to be a key from 19 characters on); and Twilio SIDs (18 distinct characters:
# `AC` and hex) with the token that follows one.
_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_ALPHABETS = st.lists(st.sampled_from(_TOKEN_CHARS), min_size=1, max_size=30, unique=True)
_RUNS_OF = _ALPHABETS.flatmap(
    lambda chars: st.text(alphabet=chars, max_size=300) | st.integers(1, 12).map(lambda n: "".join(chars) * n)
)
_SIDS = st.builds(
    lambda kind, sid, token: f'{kind}{sid}", "{token}',
    st.sampled_from(["AC", "SK"]),
    st.from_regex(r"[0-9a-f]{32}", fullmatch=True),
    st.from_regex(r"[0-9a-f]{32}", fullmatch=True),
)
_FEW_CHARACTER_TEXTS = st.lists(st.one_of(_RUNS_OF, _SIDS), min_size=1, max_size=6).flatmap(
    lambda pieces: st.sampled_from(["", " ", "=", "\n"]).map(lambda sep: sep.join(pieces))
)
# A long text whose new characters come a few at a time, a block after another, before a key: its head alone, or its
# first blocks, would say "few characters".
_BLOCKS = " ".join(c * 130 for c in "abcdefgh") + " " + "aB3dE5gH7jK9mN1pQ3sTuVw" * 2


@settings(max_examples=200, deadline=None)
@given(_FEW_CHARACTER_TEXTS)
@example("aB3dE5gH7jK9mN1pQ2s" * 2)  # 19 characters, each as often: a key
@example("aB3dE5gH7jK9mN1pQ2s" * 8)  # the same, past the head a long text is first judged by
@example("AC" + "0123456789abcdef" * 2)
@example(_BLOCKS)
def test_random_tokens_in_a_text_of_few_characters_are_those_found_after_many(text: str) -> None:
    """A text of a few characters is looked at as a whole before its runs are (none of its runs can reach the entropy
    bar, and a Twilio SID starts `AC` or `SK`): what it finds is what the runs themselves show, once a line of many
    other characters before it makes the text look at them one by one."""
    many = " ".join("ghijklmnopqrstuvwxyz!?") + "\n"  # 22 characters, no run of token characters among them
    beside = [(a - len(many), b - len(many), marker) for a, b, marker in secret_spans(many + text, rules=False)]
    assert secret_spans(text, rules=False) == beside


_MANY = st.lists(st.sampled_from(_TOKEN_CHARS[:62] + "+"), min_size=19, unique=True).map("".join)


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=_TOKEN_CHARS[:62] + "+", min_size=1, max_size=8),
    st.integers(130, 400),
    _MANY.flatmap(lambda chars: st.integers(0, 12).map(lambda n: chars * n)) | st.text(_TOKEN_CHARS[:62], max_size=300),
    st.randoms(use_true_random=False),
)
def test_a_run_is_a_random_token_by_the_characters_it_holds_in_any_order(
    unit: str, length: int, more: str, rng: random.Random
) -> None:
    """Whether a run is random enough to be a key depends on which characters it holds and how often, not on where
    they stand: a long run whose first part repeats a few characters and whose rest brings in many is judged as the
    same characters shuffled. (No `/`, `_`, `-`: paths and ids are judged by their shape.)"""
    run = (unit * length)[:length] + more
    shuffled = list(run)
    rng.shuffle(shuffled)
    assert bool(secret_spans(run, rules=False)) == bool(secret_spans("".join(shuffled), rules=False))


@given(
    st.text(
        alphabet=st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"),
        min_size=1,
        max_size=400,
    )
)
@example("aB3dE5gH7jK9mN1pQ2s" * 30)
@example("a" * 30 + "B3dE5gH7jK9mN1pQ2sT")
def test_a_runs_entropy_is_the_same_float_counted_either_way(run: str) -> None:
    """A run's characters counted one by one (cheaper for a few of them) give `Counter`'s entropy to the last bit:
    a token sits on the bar or not the same way whichever count ran."""
    assert random_token.entropy(run, set(run)) == random_token.entropy(run)
