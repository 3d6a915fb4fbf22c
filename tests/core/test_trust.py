"""The pure decision of what an untrusted settings file may set: an allow-list, and a partition of its keys."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.trust import HARMLESS, HARMLESS_PER_PLAYBOOK, harmless_part
from tests.profiles import examples

_KEYS = st.sampled_from(sorted(HARMLESS | {"db", "claude_cli", "openai_base_url", "prompts_dir"})) | st.text(
    max_size=12
)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
_PER_PLAYBOOK = st.dictionaries(
    st.sampled_from(sorted(HARMLESS_PER_PLAYBOOK | {"targets", "review", "projects"})) | st.text(max_size=8),
    _VALUES,
    max_size=4,
)
_TABLES = st.dictionaries(_KEYS, _VALUES, max_size=8).flatmap(
    lambda table: st.dictionaries(st.text(max_size=8), _PER_PLAYBOOK | _VALUES, max_size=3).map(
        lambda per: {**table, "playbook_settings": per} if per else table
    )
)


def _leaves(table: dict[str, Any]) -> set[str]:
    found = set()
    for key, value in table.items():
        if key == "playbook_settings" and isinstance(value, dict):
            for name, options in value.items():
                found |= {f"{key}.{name}.{k}" for k in options} if isinstance(options, dict) else {f"{key}.{name}"}
        else:
            found.add(key)
    return found


@settings(max_examples=examples(300))
@given(_TABLES)
def test_every_key_is_kept_only_when_allowed_or_named_as_ignored(table: dict[str, Any]) -> None:
    kept, ignored = harmless_part(table)
    assert set(kept) <= HARMLESS | {"playbook_settings"}
    for options in kept.get("playbook_settings", {}).values():
        assert options and set(options) <= HARMLESS_PER_PLAYBOOK
    assert _leaves(kept) | set(ignored) == _leaves(table) and not _leaves(kept) & set(ignored)
    assert all(kept[k] == table[k] for k in kept if k != "playbook_settings")
    assert harmless_part(kept) == (kept, [])  # what an untrusted file may set, it may set again
