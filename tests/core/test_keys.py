"""Contributor names and object keys (`core.io.keys`): whatever a key says, the path it maps to is inside the
cache, or it is refused with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ConfigError
from core.io.keys import Refused, cache_path, check_contributor, contributor_error, inside
from tests.profiles import examples

PARTS = st.one_of(
    st.sampled_from(["..", ".", "", "alice", "claude-code", "x.jsonl", "/", "~", "a\x00b", "\x1b[2J", "é" * 130]),
    st.text(min_size=0, max_size=20),
)


@settings(max_examples=examples(500))
@given(st.lists(PARTS, min_size=0, max_size=8), st.booleans())
def test_a_key_maps_inside_the_cache_or_is_refused(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str], lead: bool
) -> None:
    cache = tmp_path_factory.getbasetemp() / "cache"
    key = ("/" if lead else "") + "/".join(parts)
    found = cache_path(cache, key)
    if isinstance(found, Refused):
        assert found.key == key and found.reason
        return
    assert found.is_relative_to(cache.resolve()) and found != cache.resolve()
    assert ".." not in key.split("/") and contributor_error(key.split("/")[0]) is None


def test_a_link_in_the_cache_cannot_lead_out(tmp_path: Path) -> None:
    cache, outside = tmp_path / "cache", tmp_path / "outside"
    (cache / "alice").mkdir(parents=True)
    outside.mkdir()
    (cache / "alice" / "claude-code").symlink_to(outside)
    found = cache_path(cache, "alice/claude-code/s.jsonl")
    assert isinstance(found, Refused) and found.reason == "the key leads outside the cache"
    assert cache_path(cache, "alice/codex/s.jsonl") == (cache / "alice" / "codex" / "s.jsonl").resolve()
    assert not inside(cache, outside / "x") and inside(cache, cache / "alice" / "codex")


@pytest.mark.parametrize("name", ["dev-3f9a1c2b7e", "alice", "a.b_c-d", "A" * 64, "..."])
def test_valid_contributors(name: str) -> None:
    assert check_contributor(name) == name


@pytest.mark.parametrize("name", ["", ".", "..", "/", "a/b", "a/../b", "A" * 65, "dev 1", "dév", "a\x1bb", "a\\b"])
def test_invalid_contributors_are_one_line(name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_contributor(name)
    assert str(caught.value).startswith(f"Contributor `{name}` is refused: ")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("alice/claude-code/\udcff.jsonl", "the key is not valid UTF-8"),
        ("alice/" + "/".join(["y" * 250] * 5), "the key is 1,260 bytes (at most 1,024)"),
        ("alice/claude-code/" + "x" * 256, "a part of the key is longer than 255 bytes"),
        ("alice", "the key is not under a contributor's folder"),
        ("alice//x.jsonl", "the key has an empty, `.` or `..` part"),
        ("al ice/x.jsonl", "its contributor folder is refused: a contributor is 1-64 letters, digits, `.`, `_` or `-`"),
    ],
)
def test_each_refusal_has_its_reason(tmp_path: Path, key: str, reason: str) -> None:
    assert cache_path(tmp_path, key) == Refused(key, reason)
