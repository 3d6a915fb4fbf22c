"""Configuration from flags, environment (`PLAYBOOK_*`) and a `playbook.toml` file, in that precedence.

Below them, the user's own `config.toml` (`~/.config/playbook/`). A `playbook.toml` in the working directory (or
named by `PLAYBOOK_CONFIG`) may come with a cloned repository: until the user trusts that exact file (`playbook
trust`), only its harmless keys apply (`core.trust`), and each file read is kept with what was ignored of it.
"""

from __future__ import annotations

import hashlib
import os
import re
from contextvars import ContextVar
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic.fields import FieldInfo

from core.budget import Budget
from core.errors import ConfigError
from core.io.keys import Contributor
from core.io.objects import is_url
from core.io.trust_store import read_trust_store, user_config_file
from core.models import Guards
from core.playbook_names import check_playbook_name
from core.targets import ExportTarget
from core.trust import ConfigFile, content_hash, harmless_part, standing_of
from flows.default_store import DEFAULT_DB, check_default_store

if TYPE_CHECKING:
    from core.redact import Redactor

__all__ = [
    "PROVIDER_NAMES",
    "PlaybookOptions",
    "Settings",
    "StepLimits",
    "check_provider_name",
    "config_path",
    "default_transcripts",
    "load_settings",
    "read_config_file",
]


def config_path() -> Path:
    """The settings file of the working directory: the one `PLAYBOOK_CONFIG` names, else `playbook.toml` here."""
    return Path(os.environ.get("PLAYBOOK_CONFIG", "playbook.toml"))


def _checked_config_file() -> Path:
    """The settings file: `PLAYBOOK_CONFIG` must name a file that exists (a run without the user's consent,
    redaction or review settings must not start); `playbook.toml` in the working directory is optional.

    Raises:
        ConfigError: `PLAYBOOK_CONFIG` names a folder or a missing file.
    """
    path = config_path()
    if "PLAYBOOK_CONFIG" in os.environ and not path.is_file():
        what = "a folder" if path.is_dir() else "no file"
        raise ConfigError(f"PLAYBOOK_CONFIG names `{path}`, which is {what}; point it at a playbook.toml or unset it.")
    return path


def default_transcripts() -> list[Path]:
    """Where the agents keep their transcripts on this machine, each folder only if it exists.

    Claude Code: `projects/` under `$CLAUDE_CONFIG_DIR` (which may list several folders, comma-separated),
    else under `~/.claude` (its projects' `memory/` folders too). Codex: `$CODEX_HOME/sessions`, else
    `~/.codex/sessions`, and its `memories/` beside it.
    """
    claude = os.environ.get("CLAUDE_CONFIG_DIR", "")
    claude_dirs = [Path(p.strip()).expanduser() for p in claude.split(",") if p.strip()] or [Path.home() / ".claude"]
    codex = Path(os.environ["CODEX_HOME"]).expanduser() if os.environ.get("CODEX_HOME") else Path.home() / ".codex"
    candidates = [d / "projects" for d in claude_dirs] + [codex / "sessions", codex / "memories"]
    return [p for p in candidates if p.is_dir()]


def _default_sources() -> list[Path | str]:
    return [*default_transcripts()]


class StepLimits(BaseModel):
    """What one call may send, write and wait for: the transcript budget, output tokens per step, timeout."""

    max_input_tokens: int
    reflector_max_tokens: int
    curator_max_tokens: int
    request_timeout_s: float

    @classmethod
    def for_provider(cls, local: bool) -> StepLimits:
        """Defaults by provider: hosted models (Anthropic, the Claude CLI), or an OpenAI-compatible local server
        (`local`), where a small model on a CPU writes ~25 tokens/s and rambles to its limit."""
        if local:
            # Set when the estimate was chars/4 and llama.cpp counted up to twice it (11,816 tokens for a 6,000
            # budget, refused by its 8,192 context, which must hold the answer too); with the calibrated estimate
            # it counts at most 1.28x a whole request (docs/models.md), so 3,500 leaves room to spare.
            return cls(max_input_tokens=3500, reflector_max_tokens=1024, curator_max_tokens=768, request_timeout_s=600)
        return cls(max_input_tokens=24_000, reflector_max_tokens=4096, curator_max_tokens=4096, request_timeout_s=120)


class PlaybookOptions(BaseModel):
    """What one playbook has of its own (`[playbook_settings.NAME]` in playbook.toml)."""

    model_config = ConfigDict(extra="forbid")

    # Globs over a session's project or working directory; a playbook with none is global.
    projects: list[str] = Field(default_factory=list)
    # "required": curated versions wait for `playbook review`; exports use the newest approved version.
    review: Literal["auto", "required"] = "auto"
    targets: list[ExportTarget] = Field(default_factory=list)  # files `playbook publish` keeps up to date
    max_entries: int | None = Field(None, ge=1)  # this playbook's budget (default: the global one)
    max_tokens: int | None = Field(None, ge=1)


class NoDecode:
    """Marks a list setting whose variable is split by its validator (`a,b`), not read as JSON."""


class Settings(BaseModel):
    """Every setting, with its default. Flags override the environment, which overrides the files.

    Built as `Settings(**flags)`, it reads the layers below the flags itself (`_layered`): `PLAYBOOK_<NAME>` in any
    case (a field with aliases: those variables, the first set wins), a dict setting's variable as JSON, and the
    files; tables merge key by key. Defaults are validated too (`~` in a default folder is expanded).
    """

    # Not pydantic-settings: importing it (asyncio and every source it offers) was a tenth of a read command's
    # CPU over its floor, for the environment and two tables we read here in a few lines (bench/bench_cli.py).
    model_config = ConfigDict(extra="ignore", validate_default=True, populate_by_name=True)

    db: Path = DEFAULT_DB
    playbook: str = "default"  # the playbook a command works on when `-p` is not given
    playbooks: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["default"])
    # Folders of transcripts, and object-storage URLs (`s3://bucket/team`, ...) that developers `push` to.
    transcripts: Annotated[list[Path | str], NoDecode] = Field(default_factory=_default_sources)
    llm: str = "auto"
    reflector_model: str = "claude-sonnet-4-5"  # the model that diagnoses each session
    curator_model: str = "claude-sonnet-4-5"  # the model that turns a diagnosis into operations
    epoch_size: int = Field(8, ge=1, le=10_000)
    concurrency: int = Field(4, ge=1, le=64)
    # Prompt caching: whether a step's first call runs alone to write the cache the others read
    # (`flows.run.fanout.warms_cache`): auto | always | never.
    warm_cache: Literal["auto", "always", "never"] = "auto"
    min_messages: int = Field(4, ge=0)
    # A session is curated once it has had no new message for this long (one still being written waits);
    # a session that grows after it was applied is curated again for its new part.
    idle_minutes: float = Field(30.0, ge=0)
    # Seconds a command waits for a database another command is using (`--wait`), and a run waits for each
    # of its own brief opens, before giving up with "in use by ...".
    wait_s: float = Field(15.0, ge=0)
    busy_wait_s: float = Field(120.0, ge=0)  # how long a run waits for another run holding its database
    backups: int = Field(3, ge=0, le=1000)  # copies of the database `nightly` keeps in `<db>.backups/` (0: none)
    max_attempts: int = Field(
        3, ge=1
    )  # runs that fail to process a session before it is quarantined (`playbook retry`)
    # What one session may do (see `core.models.Guards`): longer entry texts are skipped (`too_long`); a session
    # removing more than `max_removed` entries AND more than `max_removed_share` of them is held (`mass_change`).
    # An ADD whose text a live entry already says (sentence similarity at least the threshold; None: the
    # model's own, chosen on a labelled set) is skipped as `near_duplicate` and counted as a rediscovery.
    near_duplicates: Literal["auto", "minilm", "lexical", "off"] = "auto"
    near_duplicate_threshold: float | None = Field(None, gt=0, le=1)  # None: the sentence model's own
    # `nightly` consolidates (merges near-duplicate live entries) after curating when the playbook's duplicate
    # rate (near-duplicate pairs per live entry) is above this, or the playbook is over its budget.
    consolidate_above: float = Field(0.02, ge=0)
    # With a model, a consolidation also shows it groups of entries that may say the same lesson in other words:
    # pairs from this similarity up (None: the sentence model's own floor, recall 1.0 on the labelled set for
    # MiniLM) or among each entry's two closest, at most `judge_max_entries` entries a pass. Pairs it keeps
    # apart are not shown again for `rejudge_after_days` (a model can be wrong; it is asked again later).
    consolidate_floor: float | None = Field(None, ge=0, le=1)
    judge_max_entries: int = Field(60, ge=2, le=1000)  # entries a model is shown in one consolidation pass
    rejudge_after_days: float = Field(7.0, ge=0)  # before a pair a model kept apart is shown again
    # The budget of an exported playbook (it is loaded in every session): see core.budget and docs/configuration.md.
    # An entry no session confirmed (helpful tag or rediscovery) for this many days is stale: listed by
    # `playbook stale` and left out of exports unless `export --all`. 0 turns staleness off.
    stale_after_days: float = Field(90.0, ge=0)
    # An entry no session was given for this many days (or whose trigger never came up) is proposed for retirement
    # in `playbook stale` (never removed without a person: `playbook retire`). 0: off.
    expire_days: float = Field(90.0, ge=0)
    max_entries: int = Field(40, ge=1)
    max_tokens: int = Field(2000, ge=1)
    max_entry_chars: int = Field(500, ge=20)
    max_removed: int = Field(3, ge=0)
    max_removed_share: float = Field(0.3, ge=0, le=1)
    # The run summary warns when one run leaves the playbook smaller by more than this share.
    shrink_warning_share: float = Field(0.2, ge=0, le=1)
    # A run starts no model call after this many minutes (it ends with what it finished; the rest waits for
    # the next run), nor after `breaker_failures` calls in a row failed the same way (a server down or hanging).
    max_run_minutes: float | None = Field(180.0, gt=0)
    breaker_failures: int = Field(5, ge=1)
    cost_cap_usd: float = Field(20.0, ge=0)
    # Per-call limits; unset, each takes the default of the provider (`StepLimits.for_provider`): a hosted model
    # gets room, a local model on a CPU smaller answers and a longer wait.
    max_input_tokens: int | None = Field(None, ge=100)
    reflector_max_tokens: int | None = Field(None, ge=16)
    curator_max_tokens: int | None = Field(None, ge=16)
    # USD per million tokens (input, output, cache write, cache read) by model name or family, over the
    # built-in Anthropic prices. With `anthropic_base_url` (a local or other server) only this table applies
    # and any model it does not name costs 0.
    prices: dict[str, tuple[float, float, float, float]] = Field(default_factory=dict)
    request_timeout_s: float | None = Field(None, gt=0)
    max_retries: int = Field(4, ge=0, le=20)  # retries of a model call that failed in a way worth retrying
    retry_after_cap_s: float = Field(60.0, ge=0)  # the longest `retry-after` a server may ask for
    prompts_dir: Path | None = None  # a folder of prompt overrides (`<dir>/<playbook>/` first), else the shipped
    # Extra personal data to mask before anything leaves the machine (regular expressions, case-insensitive):
    # names, host names, addresses. Home paths, user names in paths and e-mail addresses are always masked.
    personal_patterns: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # Secrets are replaced by markers before transcripts are stored; true keeps the raw text in the database
    # (it is still redacted before any model, export or report sees it).
    keep_raw_text: bool = False
    out_dir: Path = Path("data/out")  # where `nightly` and `export` write the exported playbooks and reports
    # Teams. `contributor`: the name `push` files a developer's transcripts under (default: a stable pseudonym
    # of the user and the host). `storage_options`: passed to fsspec for object-storage URLs (endpoint,
    # profile, ...). Consent: sessions of these contributors are not fetched, and sessions of projects
    # matching these globs are never curated.
    contributor: Contributor | None = None
    storage_options: dict[str, Any] = Field(default_factory=dict)  # for fsspec: endpoint, profile, ...
    exclude_contributors: Annotated[list[Contributor], NoDecode] = Field(default_factory=list)  # never fetched
    exclude_projects: Annotated[list[str], NoDecode] = Field(default_factory=list)  # globs never curated
    # A lesson enters the export of a playbook that learns from several contributors only when the sessions of
    # this many contributors support it (or a person releases it in `playbook review`).
    min_contributors: int = Field(2, ge=1)
    # Where playbooks live: "one" database file, or each "playbook" in a shard of its own beside it
    # (`<db>.<playbook>.duckdb`) that reads the sessions from the one file, so the playbooks' curation runs, on
    # several machines if need be, never share a file they write. `work_pool`: with shards, `nightly` submits one
    # curation flow run per playbook to this Prefect work pool (its workers run them) instead of running them itself.
    shard: Literal["one", "playbook"] = "one"
    work_pool: str | None = None
    # A Prefect global concurrency limit every model call takes a slot of (created with `prefect gcl create`), so
    # the workers together never have more calls in flight than it allows; unset, or missing on the server: none.
    model_calls_limit: str | None = "model-calls"
    # The SessionStart hook (`playbook hook install`) leaves each entry out of this share of sessions, chosen at
    # random and logged, so `playbook impact` can compare sessions that had it with sessions that did not.
    holdout: float = Field(0.1, ge=0, le=0.5)
    # `playbook impact` gives a verdict only when each compared group has at least this many sessions.
    impact_min_sessions: int = Field(20, ge=2)
    playbook_settings: dict[str, PlaybookOptions] = Field(default_factory=dict)  # `[playbook_settings.NAME]`
    # The Anthropic API key (`ANTHROPIC_API_KEY` too); never written to a file or a log.
    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("PLAYBOOK_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")
    )
    # An OpenAI-compatible server (llama.cpp, vLLM, LM Studio, Ollama's /v1): `--llm openai`, or `auto` without
    # an Anthropic key. The output schema goes as `response_format`, which such servers enforce by grammar.
    openai_base_url: str | None = None
    # `--llm claude-cli`: the Claude Code CLI (a subscription, no API key), run once per request; `--llm codex-cli`:
    # the Codex CLI (a ChatGPT plan), likewise (`codex_model`: its `--model`; None: the CLI's own default). `auto`
    # uses either when it is logged in. A run makes at most `max_calls` calls through either, so a nightly never
    # uses up the plan: the rest of the sessions wait for the next run.
    claude_cli: str = "claude"
    claude_cli_timeout_s: float = Field(300.0, gt=0)  # per call of the `claude` or `codex` CLI
    codex_cli: str = "codex"  # the Codex CLI executable (`--llm codex-cli`)
    codex_model: str | None = None  # its `--model` (None: the CLI's own default)
    max_calls: int = Field(50, ge=1)
    openai_api_key: SecretStr | None = None  # for an OpenAI-compatible server that asks for one
    # Another server speaking the Messages API (`ANTHROPIC_BASE_URL` too); then only `prices` sets the cost.
    anthropic_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("PLAYBOOK_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL")
    )

    @field_validator(
        "transcripts", "playbooks", "personal_patterns", "exclude_contributors", "exclude_projects", mode="before"
    )
    @classmethod
    def _split_lists(cls, value: Any) -> Any:
        """`PLAYBOOK_TRANSCRIPTS=a:b` or `a,b` (the environment has no lists); the colon of `s3://` stays."""
        if isinstance(value, str):
            separators = rf",|{re.escape(os.pathsep)}(?!//)"
            return [part for part in re.split(separators, value) if part.strip()]
        return value

    @field_validator("playbook", mode="after")
    @classmethod
    def _playbook_name(cls, value: str) -> str:
        """Every command's playbook name (`-p`, `PLAYBOOK_PLAYBOOK`, any settings file) is a plain name: it
        becomes a file name under `out_dir` and a shard's name, so a `/` or `..` would write outside them."""
        return check_playbook_name(value)

    @field_validator("playbooks", mode="after")
    @classmethod
    def _playbook_names(cls, value: list[str]) -> list[str]:
        return [check_playbook_name(name) for name in value]

    @field_validator("playbook_settings", mode="after")
    @classmethod
    def _settings_names(cls, value: dict[str, PlaybookOptions]) -> dict[str, PlaybookOptions]:
        for name in value:
            check_playbook_name(name)
        return value

    @field_validator("personal_patterns", mode="after")
    @classmethod
    def _runnable_patterns(cls, value: list[str]) -> list[str]:
        """Each pattern compiles on RE2 now, not when a command first redacts (one line naming a bad one)."""
        if value:
            from core.redact import Redactor  # its rules compile on import: only for the commands that redact

            Redactor(extra=tuple(value))
        return value

    @field_validator("llm")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        return check_provider_name(value)

    @field_validator("transcripts", mode="after")
    @classmethod
    def _expand_home(cls, value: list[Path | str]) -> list[Path | str]:
        """`~/.claude/projects` in playbook.toml means the user's home, as in a shell; URLs stay strings."""
        return [v if is_url(str(v)) else Path(v).expanduser() for v in value]

    def local_transcripts(self) -> list[Path]:
        """The transcript folders of this machine (`transcripts` without the URLs)."""
        return [v for v in self.transcripts if isinstance(v, Path)]

    def contributor_name(self) -> str:
        """`contributor`, else a stable pseudonym of this user on this host (the same every run)."""
        if self.contributor:
            return self.contributor
        import getpass  # only here: a command starts without them
        import socket

        seed = f"{getpass.getuser()}@{socket.gethostname()}"
        return "dev-" + hashlib.sha256(seed.encode()).hexdigest()[:10]

    # The configuration files read, each with the keys of it that were ignored (set by `load_settings`).
    _files: tuple[ConfigFile, ...] = PrivateAttr(default=())

    @property
    def config_files(self) -> tuple[ConfigFile, ...]:
        """The configuration files these settings read, how far each is trusted and what of it was ignored."""
        return self._files

    def __init__(self, **flags: Any) -> None:
        """Flags > environment > playbook.toml (what of it applies) > the user's own config.toml.

        Raises:
            ConfigError: a dict setting's variable is not JSON, or (built directly) a settings file is unreadable.
            ValidationError: a value is invalid.
        """
        layers = _LAYERS.get()
        if layers is None:  # built directly, not by `load_settings`: the same files, the same rule
            layers = _read_layers()
        super().__init__(**_layered(layers.own, layers.local, _from_environment(), _by_field(flags)))

    def local_server(self, local: bool) -> bool:
        """True when the calls go to a server other than Anthropic's (a `local` provider's, or
        `anthropic_base_url` pointing elsewhere): priced from `prices` only, unknown models free."""
        return local or (bool(self.anthropic_base_url) and "api.anthropic.com" not in str(self.anthropic_base_url))

    def limits(self, local: bool) -> StepLimits:
        """The per-call limits for a provider (`local`: an OpenAI-compatible server): the settings where set,
        else the provider's defaults."""
        base = StepLimits.for_provider(local)
        return StepLimits(
            max_input_tokens=self.max_input_tokens or base.max_input_tokens,
            reflector_max_tokens=self.reflector_max_tokens or base.reflector_max_tokens,
            curator_max_tokens=self.curator_max_tokens or base.curator_max_tokens,
            request_timeout_s=self.request_timeout_s or base.request_timeout_s,
        )

    def options(self, playbook: str) -> PlaybookOptions:
        """The options of `playbook` (all defaults when it has no `[playbook_settings.NAME]` table)."""
        return self.playbook_settings.get(playbook) or PlaybookOptions()

    def global_playbook(self) -> str | None:
        """The configured playbook without `projects`, when some other configured playbook is bound to projects
        (scoping is off otherwise: every playbook learns from every session)."""
        if not any(self.options(n).projects for n in self.playbooks):
            return None
        return next((n for n in self.playbooks if not self.options(n).projects), None)

    def companion(self, playbook: str) -> str | None:
        """The global playbook a bound playbook's sessions also curate (one model call for both), or None."""
        found = self.global_playbook()
        return found if found and found != playbook and self.options(playbook).projects else None

    def session_scope(self, playbook: str) -> tuple[list[str], bool] | None:
        """(globs, inside) when scoping applies to `playbook`: a bound playbook takes sessions inside its globs;
        the global one takes sessions inside none of the bound playbooks' globs. None: every session."""
        own = self.options(playbook).projects
        if own:
            return own, True
        if playbook == self.global_playbook():
            return [g for n in self.playbooks for g in self.options(n).projects], False
        return None

    def budget(self, playbook: str | None = None) -> Budget:
        """The budget exports fit and the curator is reminded of (`playbook`'s own, where it sets one)."""
        own = self.options(playbook) if playbook else PlaybookOptions()
        return Budget(max_entries=own.max_entries or self.max_entries, max_tokens=own.max_tokens or self.max_tokens)

    def guards(self) -> Guards:
        """What one session's model output may do to the playbook."""
        return Guards(
            max_entry_chars=self.max_entry_chars,
            max_removed=self.max_removed,
            max_removed_share=self.max_removed_share,
        )

    def redactor(self) -> Redactor:
        """The redactor every text passes before a model, an entry, an export or a report sees it."""
        from core.redact import Redactor

        return Redactor(home=str(Path.home()), extra=tuple(self.personal_patterns))


PROVIDER_NAMES = ("auto", "anthropic", "batch", "claude-cli", "codex-cli", "openai", "heuristic")


def check_provider_name(value: str) -> str:
    """`value` when it names a provider (or `replay:FILE`).

    Raises:
        ValueError: it names none; the message suggests the closest name.
    """
    if value in PROVIDER_NAMES or value.startswith("replay:"):
        return value
    import difflib  # only for a name that is wrong

    close = difflib.get_close_matches(value, PROVIDER_NAMES, n=1)
    hint = f"did you mean `{close[0]}`?" if close else f"use one of {', '.join(PROVIDER_NAMES)} or replay:FILE."
    raise ValueError(f"unknown provider `{value}`; {hint}")


def _variables(name: str, field: FieldInfo) -> tuple[str, ...]:
    """The variables a setting is read from, lower-cased: its aliases, else `playbook_<name>`."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(str(choice).lower() for choice in alias.choices)
    return (str(alias).lower(),) if alias else (f"playbook_{name}",)


def _is_json(field: FieldInfo) -> bool:
    """Whether a setting's variable holds JSON: a table, list or model (optional or not) not marked `NoDecode`."""
    if NoDecode in field.metadata:
        return False
    union = get_origin(field.annotation) in (Union, UnionType)
    for kind in get_args(field.annotation) if union else (field.annotation,):
        origin = get_origin(kind) or kind
        if origin in (dict, list, tuple, set, frozenset):
            return True
        if isinstance(origin, type) and issubclass(origin, BaseModel):
            return True
    return False


def _from_environment() -> dict[str, Any]:
    """The settings the environment sets, by field name: names in any case, a dict setting as JSON.

    Raises:
        ConfigError: a variable that holds JSON does not parse.
    """
    environ = {k.lower(): v for k, v in os.environ.items()}  # any case: `playbook_db` sets `db`, as it always did
    found: dict[str, Any] = {}
    for name, field in Settings.model_fields.items():
        variable = next((v for v in _variables(name, field) if v in environ), None)
        if variable is None:
            continue
        found[name] = environ[variable]
        if _is_json(field):
            import json  # only when such a variable is set

            try:
                found[name] = json.loads(environ[variable])
            except ValueError as exc:
                cause = str(exc).splitlines()[0]
                raise ConfigError(
                    f"`PLAYBOOK_{name.upper()}` is not JSON ({cause}); write it as a JSON object or unset it."
                ) from None
    return found


def _by_field(values: dict[str, Any]) -> dict[str, Any]:
    """`values` keyed by field name (a key that is a field's alias, in any case, names the field)."""
    names = {v: n for n, f in Settings.model_fields.items() for v in _variables(n, f)}
    return {k if k in Settings.model_fields else names.get(k.lower(), k): v for k, v in values.items()}


def _layered(*layers: dict[str, Any]) -> dict[str, Any]:
    """The layers merged, each over the ones before it; tables merge key by key (at any depth)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            below = merged.get(key)
            merged[key] = _layered(below, value) if isinstance(below, dict) and isinstance(value, dict) else value
    return merged


# Environment variables of ours that are not settings.
# PLAYBOOK_HOME: prefect.yaml's pull step; PLAYBOOK_MCP_SESSION: the session id an MCP client gives `playbook mcp`.
_ENV_NOT_SETTINGS = {"PLAYBOOK_CONFIG", "PLAYBOOK_PREFECT", "PLAYBOOK_HOME", "PLAYBOOK_MCP_SESSION"}


def _suggest(name: str, known: list[str]) -> str:
    import difflib  # only for a name that is wrong

    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean `{close[0]}`?" if close else f"; known keys: {', '.join(sorted(known))}."


# Settings fit in a few KB; a bound keeps a planted multi-GB file from being read whole into memory.
_MAX_CONFIG_BYTES = 1 << 20


def read_config_file(path: Path) -> tuple[dict[str, Any], str]:
    """(the table of a settings file, the SHA-256 of the very bytes it was parsed from), its keys checked.

    Raises:
        ConfigError: the file cannot be read, is not valid TOML, or has a key that is no setting.
    """
    import tomllib  # only when there is a file to read (it compiles its patterns on import)

    try:
        with path.open("rb") as file:
            data = file.read(_MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"Cannot read `{path}` ({exc.strerror}); fix its permissions.") from exc
    if len(data) > _MAX_CONFIG_BYTES:  # a cloned repository's file is read before anything of it is trusted
        raise ConfigError(f"`{path}` is over {_MAX_CONFIG_BYTES >> 20} MB, more than settings need; fix the file.")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"`{path}` is not valid TOML ({exc}); fix the file.") from exc
    except RecursionError:  # tomllib recurses per nested array or table: a file of brackets stops it
        raise ConfigError(f"`{path}` is not valid TOML (it nests arrays or tables too deep); fix the file.") from None
    known = list(Settings.model_fields)
    for key in table:
        if key not in Settings.model_fields:
            raise ConfigError(f"Unknown key `{key}` in `{path}`{_suggest(key, known)}")
    return table, content_hash(data)


class _Layers(BaseModel):
    """What the files give: the user's own config (every key) and the working directory's (what of it applies)."""

    own: dict[str, Any] = {}
    local: dict[str, Any] = {}
    own_path: Path | None = None
    local_path: Path | None = None
    files: tuple[ConfigFile, ...] = ()


# The layers `load_settings` read, for the `Settings` it builds to merge under the flags (read once per command).
_LAYERS: ContextVar[_Layers | None] = ContextVar("playbook_config_layers", default=None)


def _read_layers() -> _Layers:
    """Read the user's own config and the working directory's file, keeping of the latter only what applies.

    Raises:
        ConfigError: `PLAYBOOK_CONFIG` names no file, a file is malformed, or the trust store cannot be read.
    """
    layers = _Layers()
    own = user_config_file()
    if own.is_file():
        layers.own, _ = read_config_file(own)
        layers.own_path = own
        layers.files += (ConfigFile(path=own, standing="own", ignored=[]),)
    path = _checked_config_file()
    if not path.is_file() or (layers.own_path is not None and path.resolve() == own.resolve()):
        return layers
    table, digest = read_config_file(path)
    standing = standing_of(read_trust_store(), path.resolve(), digest)
    kept, ignored = harmless_part(table)
    if standing == "trusted":
        kept, ignored = table, []
    layers.local, layers.local_path = kept, path
    layers.files += (ConfigFile(path=path, standing=standing, ignored=ignored),)
    return layers


def _check_variables() -> None:
    """Unknown PLAYBOOK_* variables are errors, never silently ignored (as unknown keys in a file are)."""
    known = list(Settings.model_fields)
    names = [f"PLAYBOOK_{k.upper()}" for k in known]
    for variable in os.environ:
        if variable.startswith("PLAYBOOK_") and variable not in names and variable not in _ENV_NOT_SETTINGS:
            raise ConfigError(f"Unknown environment variable `{variable}`{_suggest(variable, names)}")


def _explain(exc: ValidationError, layers: _Layers, flags: dict[str, Any]) -> ConfigError:
    """One line naming the setting, where it came from, and what is wrong with it."""
    error = exc.errors()[0]
    key = str(error["loc"][0]) if error["loc"] else "?"
    if key in flags:
        where = "the command line"
    elif f"PLAYBOOK_{key.upper()}" in os.environ:
        where = f"PLAYBOOK_{key.upper()}"
    elif key in layers.local:
        where = f"`{layers.local_path}`"
    elif key in layers.own:
        where = f"`{layers.own_path}`"
    else:
        where = "the settings"
    name = ".".join(str(part) for part in error["loc"]) or key  # playbook_settings.api.targets.0.kind
    return ConfigError(f"Invalid value for `{name}` in {where}: {error['msg']} (got {error.get('input')!r}).")


def load_settings(**overrides: Any) -> Settings:
    """Settings with the flags the user actually passed (None means "not given").

    Raises:
        ConfigError: an unknown key or variable, a bad value, a malformed playbook.toml or trust store, in one line.
    """
    flags = {k: v for k, v in overrides.items() if v is not None}
    layers = _read_layers()
    _check_variables()
    token = _LAYERS.set(layers)
    try:
        settings = Settings(**flags)
    except ValidationError as exc:
        raise _explain(exc, layers, flags) from None
    finally:
        _LAYERS.reset(token)
    settings._files = layers.files
    named = "db" in flags or "db" in _from_environment() or "db" in layers.own or "db" in layers.local
    check_default_store(settings.db, named=named)
    return settings
