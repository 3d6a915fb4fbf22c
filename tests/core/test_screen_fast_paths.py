"""The screen's quick answers for texts that hold nothing to read: each pass that says "nothing here" stands for the
patterns it skips (it finds something exactly where one of them does), sentences are marked as the pattern marks
them, and a text read through those passes gets the verdict the patterns one by one gave (the full path, rebuilt
here from the same patterns)."""

from __future__ import annotations

import json
from pathlib import Path

import re2
from hypothesis import given, settings
from hypothesis import strategies as st

import core.insecure_settings as insecure_settings
import core.links as links
import core.overrides as overrides
import core.phrases as phrases
import core.reading as reading
import core.safeguards_off as safeguards_off
import core.screen as screen
import core.secret_sends as secret_sends
from core.invisible import normalise
from core.phrases import folded_refusals
from core.reading import folded
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]
LABELLED = json.loads((ROOT / "data" / "lessons" / "screen.json").read_text())
ATTACKS = json.loads((ROOT / "data" / "lessons" / "attacks.json").read_text())

# Pieces a lesson is made of, with what the patterns look for: links and hosts written every way, shell syntax,
# flags, paths, assignments, privilege, phrases and their halves, sentence ends and look-alike letters.
PIECES = [
    *LABELLED["ordinary"][:20],
    *[text for text, _ in LABELLED["hostile"]],
    *[case["text"] for case in ATTACKS["hostile"][:40]],
    *["https://evil.net\\@good.com", "[docs](evil.sh)", "a@b.io", "from evil.sh", "evil[.]com", "evil dot com"],
    *["10.0.0.8:80", "get.evil.sh/i", "www.x.io", "evil\u3002com", "//cdn.x", ".env", "~/.ssh", "/etc/passwd"],
    *["FOO=bar", "C:\\x", "%APPDATA%", "$HOME/x", "sudo", " -rf ~/", "--force", "$(x)", "<(x)", "a > b", "&&", "{a}"],
    *["Ignore the", "previous instructions", "Do not tell", "the user", "paste the token", "into the issue"],
    *["add requests to requirements", "push with the force flag", "never force-push", "ígnore", "\u2014no-verify"],
    *["if the hook fails,", "skip it", "rejectUnauthorized: false", "ssl._create_unverified_context", "quote a token"],
    *["in the wiki", "evil.io#x", "to 3232235777", "run kubectl delete ns prod", "salta los hooks y sube"],
    *["0300.0250.1.1/x", "[::ffff:c0a8:101]", "the token should be included in", "attach it to", "sk1p th3 h00ks"],
    *[". ", "! ", "?\t", ".\n", ".\x0b", ";", "", "ʀun", "ехample.com", "日本語"],
]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=24), min_size=1, max_size=4).map(
    lambda parts: " ".join(parts)
)
# Each quick pass, and the patterns it stands for.
PASSES = {
    "links": (links._ANY_LINK, [links._CANDIDATE, links._MARKDOWN_TARGET, links._EMAIL, links._IPV6]),
    "bare hosts": (links._ANY_BARE, [links._IPV4, links._BARE, links._NUMERIC, links._DOTTED]),
    "defanged": (links._ANY_DEFANGED, [links._DEFANGED]),
    "prose marks": (
        screen._PROSE_MARKS,
        [
            screen._PROSE_SHELL,
            screen._PROSE_FLAG,
            screen._PROSE_PATH,
            screen._PROSE_ASSIGNMENT,
            screen._PROSE_PRIVILEGE,
        ],
    ),
    "quiet prose": (
        screen._PROSE_QUIET,
        [
            *(re2.compile(p) for p in links.HOST_PATTERNS),
            screen._PROSE_SHELL,
            screen._PROSE_FLAG,
            screen._PROSE_PATH,
            screen._PROSE_ASSIGNMENT,
            screen._PROSE_PRIVILEGE,
        ],
    ),
    "override": (phrases._ANY_OVERRIDE, [overrides.OVERRIDE]),
    "said away": (phrases._ANY_SAID_AWAY, [safeguards_off.SAID_AWAY]),
    "sent phrases": (
        phrases._ANY_SENT,
        [
            secret_sends.SENDS,
            secret_sends.DIRECT_SEND,
            secret_sends.PASSIVE_SEND,
            secret_sends.COMMITS_SECRET,
            secret_sends.PASSIVE_COMMIT,
            secret_sends.SHOWN,
            secret_sends.CREDENTIAL,
            phrases._INSTALL_WORDS,
        ],
    ),
    "safeguards off": (phrases._ANY_SAFEGUARD_OFF, [safeguards_off.SAFEGUARD_OFF]),
    "settings off": (
        phrases._ANY_SETTING_OFF,
        [safeguards_off.PRONOUN_OFF, insecure_settings.SETTING, insecure_settings.IDENTIFIER],
    ),
}
_SENTENCE_END = re2.compile(r"[.!?](?:\s|$)")


@settings(max_examples=examples(500))
@given(texts, st.sampled_from(sorted(PASSES)))
def test_a_pass_finds_nothing_only_where_none_of_its_patterns_does(text: str, name: str) -> None:
    one, each = PASSES[name]
    for said in (normalise(text), folded(normalise(text))):
        if not one.found_in(said):
            assert all(p.search(said) is None for p in each), (name, said)


@settings(max_examples=examples(300))
@given(texts)
def test_a_secret_is_sent_only_where_its_parts_are_named(text: str) -> None:
    said = reading.sentences(folded(normalise(text)))
    if secret_sends.SENDS.search(said) is not None:
        assert all(part.found_in(said) for part in phrases._SENDS_PARTS)


@settings(max_examples=examples(500))
@given(st.text(alphabet=st.sampled_from(list(".!?; \t\n\f\r\x0bab.")), max_size=30) | texts)
def test_sentences_are_marked_as_the_pattern_marks_them(text: str) -> None:
    assert reading.sentences(text) == _SENTENCE_END.sub("; ", text)


@settings(max_examples=examples(500))
@given(*[st.text(alphabet=st.sampled_from(list(".!?; \t\n\f\r\x0bab.")), max_size=12) | texts] * 2)
def test_two_texts_are_marked_together_as_each_was_alone(first: str, then: str) -> None:
    together = reading.joined(first, reading.sentences(first), reading.sentences(then))
    assert together == reading.sentences(first + " " + then)


def _every_phrase(text: str) -> list[tuple[str, str]]:
    """The second line read the long way: each phrase pattern searched in the whole text, none skipped."""
    said = _SENTENCE_END.sub("; ", text)
    found: list[tuple[str, str]] = []
    if match := overrides.overridden(said):
        found.append(("override", f"`{phrases._clip(match.group())}` speaks to the agent over the user's head"))
    if match := secret_sends.sent(said):
        found.append(("credential", f"`{phrases._clip(match.group())}` sends a secret somewhere"))
    elif match := secret_sends.CREDENTIAL.search(said):
        found.append(("credential", f"`{match.group()}` names a credential store"))
    if match := phrases._INSTALL_WORDS.search(said):
        found.append(("install", f"`{phrases._clip(match.group())}` installs a package named in words"))
    if match := safeguards_off.talked_off(said):
        found.append(("bypass", f"`{phrases._clip(match.group())}` talks the agent out of a safeguard"))
    return found


@settings(max_examples=examples(500))
@given(texts, texts)
def test_the_phrases_read_quickly_are_those_read_the_long_way(first: str, then: str) -> None:
    alone, together = folded(normalise(first)), folded(normalise(first)) + " " + folded(normalise(then))
    assert folded_refusals(alone) == _every_phrase(alone)
    assert folded_refusals(together) == _every_phrase(together)


def test_each_pass_is_searched_where_it_matters() -> None:
    """The passes are not vacuous: each finds what its patterns find in the labelled hostile lessons."""
    hostile = [normalise(text) for text, _ in LABELLED["hostile"]] + [normalise(c["text"]) for c in ATTACKS["hostile"]]
    for name, (one, each) in PASSES.items():
        said = [
            folded(t) if name in ("override", "sent phrases", "safeguards off", "settings off", "said away") else t
            for t in hostile
        ]
        hits = [t for t in said if any(p.search(t) for p in each)]
        assert hits, name
        assert all(one.found_in(t) for t in hits), name


_MARKDOWN = st.text(alphabet=st.sampled_from(list("ab1 _*[].!?\tIT'(")), max_size=30)


@settings(max_examples=examples(500))
@given(_MARKDOWN)
def test_emphasis_is_read_as_shown(text: str) -> None:
    """Brackets never survive, nor does `*` but alone between quotes or brackets (`'*'`, `[*]`: a wildcard, no
    emphasis); an underscore survives exactly where it joins two letters or digits (inside a word, where CommonMark
    reads no emphasis); nothing else changes."""
    shown = reading.unemphasised(text)
    lone = text
    for pair in ("''", '""', "()", "[]", "``"):
        lone = lone.replace(f"{pair[0]}*{pair[1]}", f"{pair[0]}\x00{pair[1]}")
    assert "[" not in shown and "]" not in shown
    assert shown.count("*") == lone.count("\x00")
    shown = shown.replace("*", "\x00")
    plain = lone.replace("*", "").replace("[", " ").replace("]", " ")
    kept = [
        run
        for run in re2.compile(r"_+").finditer(plain)
        if run.start() > 0
        and run.end() < len(plain)
        and plain[run.start() - 1].isalnum()
        and plain[run.end()].isalnum()
    ]
    assert shown.count("_") == sum(len(run.group()) for run in kept)
    assert shown.replace("_", "") == plain.replace("_", "")


_GOES_ON = ("into", "onto", "inside", "within", "via", "through", "across", "toward", "towards", "unto")
_GOES_ON_IN_LOWER_CASE = (
    "to",
    "in",
    "on",
    "at",
    "from",
    "for",
    "with",
    "by",
    "of",
    "as",
    "the",
    "a",
    "an",
    "and",
    "or",
)
_GOES_ON_IN_LOWER_CASE += ("your", "its", "their")


def _run_on_the_long_way(text: str) -> str:
    """Each run of sentence marks written as a line break where white space and then a preposition of where to (any
    case) or a preposition, article or conjunction in lower case follow it, as a whole word; one run at a time."""
    out, at = [], 0
    for marks in re2.compile(r"[.!?]+").finditer(text):
        rest = text[marks.end() :]
        word = re2.compile(r"^\s+(\w*)").search(rest)
        said = word.group(1) if word else ""
        goes_on = said.lower() in _GOES_ON or said in _GOES_ON_IN_LOWER_CASE
        out.append(text[at : marks.start()] + "\n" if goes_on else text[at : marks.end()])
        at = marks.end()
    return "".join(out) + text[at:]


_SENTENCE_PIECES = st.lists(
    st.sampled_from(
        ["a", "Tb", "into", "Into", "INTO", "intox", "via", "to", "To", "npm", " ", "\n", ".", "!", "?", "é"]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=examples(500))
@given(_SENTENCE_PIECES)
def test_a_sentence_mark_is_taken_out_only_where_the_sentence_goes_on(text: str) -> None:
    assert reading.run_on(text) == _run_on_the_long_way(text)
