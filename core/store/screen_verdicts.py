"""The screen's verdicts kept between runs (`playbook_screen.screen_verdicts`): screening every entry of a 5,000-entry
playbook on every export was most of what a run's export cost, and all but the few entries a run changed read
the same as the run before.

A verdict is kept under a key of everything it depends on (`playbook_screen.verdict_key`, `pair_key`): the exact text,
a fingerprint of what the user vouches for, `SCREEN_VERSION` and the fingerprint of the screen's own code, data and
libraries (`rules_fingerprint`), so a change to any of them reads the text again and no kept verdict outlives the
rules that gave it. What an entry rests on (its support, the quorum) is never kept: the screen reads it each time.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path

import duckdb

from core.screen import SCREEN_VERSION, Hold

__all__ = ["SCREEN_MODULES", "keep_verdicts", "kept_verdicts", "rules_fingerprint"]

# Every module of ours the screen's verdict depends on (a test checks this is every `core` module `core.screen`
# imports), and the data file it reads.
SCREEN_MODULES = (
    "allowlist", "code_spans", "invisible", "language", "links", "models", "patterns", "phrases", "programs",
    "prohibitions", "overrides", "secret_sends", "safeguards_off", "insecure_settings", "safeguard_talk",
    "safeguard_words", "secret_talk", "referents", "playbook_screen",
    "prose_commands", "reading", "screen", "shell", "program_calls", "program_tasks", "policy_builds", "policy_git",
    "policy_javascript", "policy_python", "policy_services", "policy_toolchains", "policy_utilities",
    "fenced_code", "code_tree", "go_code", "javascript_code", "rust_code", "dockerfile", "lessons", "quote_words",
    "recipes", "project_paths", "requirements_files", "task_judge", "vouched", "refusal", "pytest_config",
)  # fmt: skip
_DATA = ("tlds.txt", "quote_words.txt")
# The libraries that parse and match for it: another version may read a text differently.
_LIBRARIES = (
    "google-re2", "tree-sitter", "tree-sitter-bash", "tree-sitter-go", "tree-sitter-javascript", "tree-sitter-rust",
    "tree-sitter-typescript", "idna", "pyyaml",
)  # fmt: skip
# More verdicts than this (every text of every playbook under a few vouched sets) and the oldest go.
_MOST = 200_000


@cache
def rules_fingerprint() -> str:
    """A fingerprint of the screen as this process runs it: `SCREEN_VERSION`, the source of its modules and its
    data, the versions of the libraries it parses with, Python's and its Unicode database's."""
    digest = hashlib.sha256(f"{SCREEN_VERSION} {sys.version} {unicodedata.unidata_version}".encode())
    for library in _LIBRARIES:
        try:
            digest.update(f" {library}={metadata.version(library)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f" {library}=?".encode())
    root = Path(__file__).resolve().parents[1]
    for name in [f"{m}.py" for m in SCREEN_MODULES] + list(_DATA):
        try:
            digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
        except OSError:  # code that cannot be read cannot be told apart from other code: keep nothing for it
            digest.update(os.urandom(32))
    return digest.hexdigest()


def kept_verdicts(con: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> dict[str, list[Hold]]:
    """The verdicts kept under `keys` (those found; a key not kept is not in the answer)."""
    rows = con.execute(
        "SELECT key, holds FROM screen_verdicts WHERE key IN (SELECT unnest(?))", [sorted(set(keys))]
    ).fetchall()
    # Most texts are admitted: `[]` needs no parsing.
    return {str(k): [] if h == "[]" else [Hold.model_validate(x) for x in json.loads(h)] for k, h in rows}


def keep_verdicts(con: duckdb.DuckDBPyConnection, verdicts: Mapping[str, list[Hold]], rules: str) -> None:
    """Keep `verdicts` (key -> holds) for the next run, read under `rules` (`rules_fingerprint`); verdicts of any
    other code go. Nothing on a connection that only reads (the next writer keeps them)."""
    row = con.execute("SELECT readonly FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    if not verdicts or (row is not None and row[0]):
        return
    keys = list(verdicts)
    # Most texts are admitted: `[]` needs no writing out (as `kept_verdicts` needs no parsing).
    holds = [json.dumps([h.model_dump() for h in verdicts[k]]) if verdicts[k] else "[]" for k in keys]
    con.execute("DELETE FROM screen_verdicts WHERE rules <> ?", [rules])
    con.execute(
        "INSERT OR IGNORE INTO screen_verdicts (key, rules, holds) SELECT unnest(?), ?, unnest(?)", [keys, rules, holds]
    )
    row = con.execute("SELECT count(*) FROM screen_verdicts").fetchone()
    if row is not None and row[0] > _MOST:
        con.execute(
            "DELETE FROM screen_verdicts WHERE key IN (SELECT key FROM screen_verdicts ORDER BY screened_at DESC, key"
            " OFFSET ?)",
            [_MOST],
        )
