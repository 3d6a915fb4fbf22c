"""The one exception tree of playbook.

```
PlaybookError
 +-- TransientError          worth retrying: the same call may succeed later
 |    +-- DatabaseBusyError  another process holds the database file
 |    +-- VersionConflictError  another writer added a playbook version meanwhile
 |    +-- ObjectChangedError  an object of a team's store changed on every read of it
 |    +-- AnswerError        a model answer cut short or of the wrong shape (counted against its session)
 +-- TerminalError           retrying changes nothing: fix the input or the config
      +-- PlaybookFileError  a file (playbook.json, an export, CLAUDE.md) that cannot be read or written
      |    +-- NoSectionsError  save_playbook of a dict without `sections` (also an AssertionError)
      +-- SectionsError      a sections.yaml that breaks the section rules
      +-- SchemaVersionError a database written by a newer playbook
      +-- StoreError         a request the store cannot satisfy (unknown version, ...)
      +-- PromptError        a prompt template whose manifest does not hold
      +-- BudgetError        a request that cannot fit its token budget, refused before any call
      +-- GitError           a git command that failed (publish --git)
      +-- ConfigError        missing or contradictory configuration
      |    +-- AuthError      the model API refused the configured key
      +-- RunFailedError     a run ran, and every session it attempted failed (in core.runsummary, beside
                             the summaries it carries: errors import nothing of playbook's)
```

Messages are one sentence naming the thing in backticks, plus the next step.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "AnswerError",
    "AuthError",
    "BudgetError",
    "ConfigError",
    "DatabaseBusyError",
    "GitError",
    "NoSectionsError",
    "ObjectChangedError",
    "PlaybookError",
    "PlaybookFileError",
    "PromptError",
    "SchemaVersionError",
    "SectionsError",
    "StoreError",
    "TerminalError",
    "TransientError",
    "VersionConflictError",
]


class PlaybookError(Exception):
    """Base of every error this project raises on purpose."""


class TransientError(PlaybookError):
    """A failure that may go away if the same thing is tried again."""


class TerminalError(PlaybookError):
    """A failure that repeats until the input or configuration changes."""


class DatabaseBusyError(TransientError):
    """Another process holds the DuckDB file."""


class VersionConflictError(TransientError):
    """Another writer added a playbook version while this one was being built; running again resolves it."""


class AnswerError(TransientError):
    """A model's answer that is no answer: cut short (`truncated`), of the wrong shape (`wrong_shape`), or with no
    JSON object at all (`no_json`). Another call may answer well, so the session is tried again by the next run;
    unlike a failed call, it counts against the session, which is quarantined after `max_attempts`."""

    def __init__(self, message: str, kind: Literal["truncated", "wrong_shape", "no_json"]) -> None:
        super().__init__(message)
        self.kind = kind


class ObjectChangedError(TransientError):
    """An object of a team's store that changed (or went) between being listed and being read, every time it was
    read: it is left for the next ingest, never stored half one version and half another."""


class PlaybookFileError(TerminalError):
    """A file the product reads or writes (playbook.json, an export, CLAUDE.md): corrupt, unreadable or unwritable."""


class NoSectionsError(PlaybookFileError, AssertionError):
    """A playbook dict without `sections` given to `save_playbook`; the hook scripts assert there, so this is
    an `AssertionError` for their callers as well as the project's file error."""


class SectionsError(TerminalError):
    """A section set (sections.yaml) that violates the section rules."""


class SchemaVersionError(TerminalError):
    """A database whose schema is newer than this program understands."""


class StoreError(TerminalError):
    """A store request that cannot be satisfied (unknown playbook or version, ...)."""


class PromptError(TerminalError):
    """A prompt template that lacks a placeholder or names an unknown schema."""


class BudgetError(TerminalError):
    """A request that cannot fit its step's token budget even compacted: refused before any call (fail
    closed)."""


class GitError(TerminalError):
    """A `git` command that failed while publishing to a repository; the message has git's own first line."""


class ConfigError(TerminalError):
    """Configuration that is missing or contradicts itself."""


class AuthError(ConfigError):
    """The model API refused the key (HTTP 401/403): every call would fail the same way, so the run stops."""
