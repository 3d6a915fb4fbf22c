"""The `playbook` command line: one file per group of commands (Typer's "one file per command" layout, each
module's commands added without a name, so every command stays at the top level), each command one library call
plus rendering.

The project's errors (`PlaybookError`) are translated once, here, for every command: `Error: <message>` on
stderr and exit 1; usage errors exit 2 (Typer's default); Ctrl-C prints one line and exits 130. No traceback.
Each command imports what it uses inside its body, and only the command named is built: `--help` and the read
commands never load Prefect, the anthropic SDK or the run loop, and a read command printing into a pipe not even Rich
(bench/bench_cli.py: 1.7-1.9x the CPU of a bare Python running the same queries; the libraries alone 2.0x).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from core.errors import PlaybookError
from flows.cli import admin, exports, hook, ingest, insight, llm, playbooks, review, runs, sessions
from flows.cli._render import err, escape, out

__all__ = ["app", "main"]


class _OneErrorLine(TyperGroup):
    """The command group that translates the project's errors, once for every command."""

    def invoke(self, ctx: Any) -> Any:  # typer 0.29 vendors click: its Context type is private
        try:
            return super().invoke(ctx)
        except PlaybookError as exc:
            err.print(f"[red]Error:[/red] {escape(str(exc))}", highlight=False)
            raise typer.Exit(code=1) from None
        except KeyboardInterrupt:
            _interrupted()
        except RuntimeError as exc:
            if str(exc) != _DUCKDB_INTERRUPTED:
                raise
            _interrupted()


# DuckDB turns Ctrl-C during a query into this error rather than KeyboardInterrupt.
_DUCKDB_INTERRUPTED = "Query interrupted"


def _interrupted() -> None:
    # Every database connection and the run lock were released on the way here; what a run had finished is
    # committed, and the next run resumes the rest. The interpreter's teardown still runs (it stops Prefect's local
    # server), but its noise (leaked bindings, thread tracebacks) would bury this line, so standard error goes to
    # /dev/null after it.
    err.print("Interrupted; run the same command again to resume.", highlight=False)
    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    # A model call in flight keeps its worker thread until the call's deadline (minutes), and the interpreter
    # joins worker threads before it exits: the teardown gets a few seconds, then the process ends all the same.
    watchdog = threading.Timer(_TEARDOWN_S, os._exit, args=(130,))
    watchdog.daemon = True
    watchdog.start()
    raise typer.Exit(code=130) from None


# How long an interrupted process may spend in the interpreter's teardown (Ctrl-C ends a run within 5 s).
_TEARDOWN_S = 2.0


class _Playbook(typer.Typer):
    """The app, which builds only the command its command line names: Typer turns every command's signature into
    Click options each time it starts (about 20 ms of CPU for 42 commands), and a read command is over in not much
    more. `--help`, a mistyped command or an option first build them all, as before."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        given = kwargs.get("args", args[0] if args else None)
        words = list(given) if given is not None else sys.argv[1:]
        only = _only(words[0]) if words and not words[0].startswith("-") else None
        if only is None:
            return super().__call__(*args, **kwargs)
        if words[0] in _SHORT:
            return _short(only, *args, **kwargs)
        # A long command (a run, an export, a server) keeps the collector on, but out of start-up's ~45,000 objects:
        # the full collections a run sets off (two at a 5,000-entry playbook) walk what the run allocated, not them
        # (0.16-0.22 s of CPU less for a one-epoch curate and export at 5,000 entries, nothing at 100).
        gc.freeze()
        return typer.Typer.__call__(only, *args, **kwargs)


# Short commands: the reads (a few queries and their rendering) and ingest (with nothing new, about as short as a read;
# a full one hands its work to DuckDB, and a 253 MB archive leaves the collector < 1,000 objects to collect).
_SHORT = frozenset({"diff", "history", "ingest", "sessions", "show", "sql", "stats", "why"})


def _short(only: typer.Typer, *args: Any, **kwargs: Any) -> Any:
    """Run a short command with Python's cycle collector off, and leave what it allocated to the end of the process.

    The collector walks the ~45,000 objects start-up left (Typer, pydantic, DuckDB) whenever allocations pile up,
    and the interpreter's teardown walks them again to free them a moment before the process ends: a third of a read
    command's CPU (bench/bench_cli.py). (Frozen with the collector left on, DuckDB's bindings report their objects as
    leaked on the way out.)"""
    collecting = gc.isenabled()
    gc.disable()
    plugins = os.environ.get(_PLUGINS)
    if plugins is None:  # one the user set is theirs
        os.environ[_PLUGINS] = "__all__"
    try:
        return typer.Typer.__call__(only, *args, **kwargs)
    except SystemExit:  # how Typer ends a command on the command line
        gc.freeze()
        raise
    finally:
        if plugins is None:
            os.environ.pop(_PLUGINS, None)
        if collecting:
            gc.enable()


# Pydantic looks for plugins of its own in every installed package's metadata the first time a model is built
# (~4 ms of a read command's ~0.22 s of CPU, bench/bench_cli.py); the project uses none, and a short command builds its
# models with the search turned off. Only while it runs: a caller's process (a test, a script) finds its plugins after.
_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"


def _new_app(cls: type[typer.Typer] = typer.Typer) -> typer.Typer:
    return cls(
        name="playbook",
        cls=_OneErrorLine,
        help="Learn a playbook of lessons from coding-agent transcripts (Prefect + DuckDB).",
        rich_markup_mode="rich",
        context_settings={"help_option_names": ["-h", "--help"]},
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,
    )


_GROUPS = (ingest, sessions, playbooks, exports, review, runs, insight, admin)
_NAMED = (llm, hook)  # named groups: `playbook llm serve`, `playbook hook install`

app = _new_app(_Playbook)
for _group in (*_GROUPS, *_NAMED):
    app.add_typer(_group.app)


def _only(name: str) -> typer.Typer | None:
    """The app with the one command (or named group) `name`, or None when no command has that name."""
    pruned = _new_app()
    pruned.callback()(root)
    for named in _NAMED:
        if named.app.info.name == name:
            pruned.add_typer(named.app)
            return pruned
    for group in _GROUPS:
        for command in group.app.registered_commands:
            if command.name == name:
                one = typer.Typer()
                one.registered_commands = [command]
                pruned.add_typer(one)
                return pruned
    return None


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("playbook")
        except PackageNotFoundError:  # a checkout on sys.path without an install
            number = "unknown (not installed)"
        out.print(f"playbook {number}")
        raise typer.Exit()


@app.callback()
def root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Learn a playbook of lessons from coding-agent transcripts (Prefect + DuckDB)."""


def main() -> None:
    """Entry point."""
    app()
