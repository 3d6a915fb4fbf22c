"""What a playbook name may be: a plain name, since it becomes a file name (`<out_dir>/<name>.md`, a shard).

An allow-list: letters, digits and `._-`, starting with a letter or digit, at most 100 characters. A name so made
holds no `/`, no `..` and no leading `-`, so every path built from it stays in its folder and no program reads it
as an option. The same rule holds wherever a name comes from: a flag, the environment, any settings file.
"""

from __future__ import annotations

import re2

__all__ = ["PLAYBOOK_NAME_RULE", "check_playbook_name", "is_playbook_name"]

PLAYBOOK_NAME_RULE = "letters, digits and `._-`, starting with a letter or digit, at most 100 characters"
_PLAYBOOK_NAME = re2.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def is_playbook_name(name: object) -> bool:
    """True when `name` is a string a playbook may be named."""
    return isinstance(name, str) and _PLAYBOOK_NAME.fullmatch(name) is not None


def check_playbook_name(name: str) -> str:
    """`name` when a playbook may be named so.

    Raises:
        ValueError: it may not (the message gives the rule).
    """
    if not is_playbook_name(name):
        raise ValueError(f"not a playbook name; use {PLAYBOOK_NAME_RULE}")
    return name
