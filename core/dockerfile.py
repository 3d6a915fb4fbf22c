"""A fenced Dockerfile, read line by line as Docker's builder reads it (an instruction and its arguments, a line
continued by `\\`), and what refuses one.

Allow, don't deny: every instruction is one Docker knows and each is judged for what it does. `RUN` (and the
command a container starts with, `CMD`, `ENTRYPOINT`, `HEALTHCHECK CMD`) is a shell command judged by the allow-list,
in shell or exec form; `FROM` any image is fine; `ADD` of a URL or a repository is a link; `USER root` runs as root;
a variable set for the commands after it (`ENV`, an `ARG` after `FROM`) is judged as the allow-list judges one set
before a command; a flag no list here knows (`--security=insecure`, `--network=host`, a secret mounted) waits for
review, as does a heredoc, which this reader does not follow.
"""

from __future__ import annotations

import json
import shlex

import re2

from core.allowlist import Refusal, Vouched, command_refusals
from core.code_tree import Reading
from core.program_calls import clip

__all__ = ["DOCKERFILE_FENCES", "dockerfile_instructions", "read_dockerfile"]

# Fence info strings of a Dockerfile (not `docker`, which as often shows `docker run ...` command lines).
DOCKERFILE_FENCES = frozenset(("dockerfile", "containerfile"))

_INSTRUCTIONS = frozenset(
    "from run cmd entrypoint copy add env arg workdir user expose label volume healthcheck shell stopsignal onbuild"
    " maintainer".split()
)
_INSTRUCTION = re2.compile(r"^([A-Za-z]+)(?:[ \t]+(.*))?$")
_DIRECTIVE = re2.compile(r"^#[ \t]*([A-Za-z]+)[ \t]*=[ \t]*(\S*)[ \t]*$")
_HEREDOC = re2.compile(r"<<-?[\"']?[A-Za-z_]")
# The flags each instruction may take unreviewed (by name; `RUN --mount` by its type below).
_FLAGS = {
    "from": ("--platform",),
    "run": ("--mount", "--network"),
    "copy": ("--from", "--chown", "--chmod", "--link", "--parents", "--exclude"),
    "add": ("--chown", "--chmod", "--link", "--keep-git-dir", "--checksum", "--exclude"),
    "healthcheck": ("--interval", "--timeout", "--start-period", "--start-interval", "--retries"),
}
_MOUNTS = frozenset(("cache", "bind", "tmpfs"))  # no secret, no ssh agent handed to a build step
_NETWORKS = frozenset(("default", "none"))
_SHELLS = frozenset("/bin/sh /bin/bash /bin/ash sh bash ash pwsh powershell cmd".split())
_SHELL_OPTIONS = frozenset(("pipefail", "errexit", "nounset", "xtrace"))  # `-o pipefail`: no script, no file
_ROOT = frozenset(("root", "0"))


def dockerfile_instructions(body: str) -> list[tuple[str, str]] | None:
    """The instructions of a Dockerfile, each its name (lower case) and its arguments, continued lines joined; None
    when a line is no instruction Docker knows (then it is no Dockerfile this reader reads)."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue  # a comment, also between continued lines (Docker drops those)
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical, pending = pending + stripped, ""
        match = _INSTRUCTION.match(logical)
        if match is None or match.group(1).lower() not in _INSTRUCTIONS:
            return None
        found.append((match.group(1).lower(), (match.group(2) or "").strip()))
    if pending:  # continued past the last line
        match = _INSTRUCTION.match(pending.strip())
        if match is None or match.group(1).lower() not in _INSTRUCTIONS:
            return None
        found.append((match.group(1).lower(), (match.group(2) or "").strip()))
    return found


def read_dockerfile(body: str, vouched: Vouched) -> Reading:
    """The reading of a fenced Dockerfile: what refuses its instructions, and the texts to read for links (its
    comments, labels, the sources it adds)."""
    reading = Reading()
    for line in body.splitlines():
        stripped = line.strip()
        directive = _DIRECTIVE.match(stripped)
        if directive is not None:  # `# syntax=docker/dockerfile:1`: the builder's own front end, or another image
            name, value = directive.group(1).lower(), directive.group(2)
            if (name == "syntax" and not value.startswith("docker/dockerfile:")) or name == "escape":
                reading.refusals.append(Refusal("syntax", f"`# {clip(name)}={clip(value, 40)}` changes how it is read"))
        elif stripped.startswith("#"):
            reading.strings.append(stripped[1:])
    instructions = dockerfile_instructions(body)
    if instructions is None:
        reading.refusals.append(
            Refusal("syntax", "the `dockerfile` block has a line that is no Dockerfile instruction")
        )
        return reading
    written: set[str] = set()
    staged = False  # an `ARG` before the first `FROM` names images only
    for name, arguments in instructions:
        staged = staged or name == "from"
        reading.refusals += _instruction_refusals(name, arguments, staged, vouched, written, reading.strings)
    return reading


def _instruction_refusals(
    name: str, arguments: str, staged: bool, vouched: Vouched, written: set[str], strings: list[str]
) -> list[Refusal]:
    """What refuses one instruction (`name` in lower case, its `arguments` as written)."""
    if name == "onbuild":  # an instruction run by whatever image builds on this one: judged as that instruction
        inner = dockerfile_instructions(arguments)
        if not inner or len(inner) != 1 or inner[0][0] in ("onbuild", "from", "maintainer"):
            return [Refusal("syntax", f"`ONBUILD {clip(arguments, 40)}` is no instruction this reader follows")]
        return _instruction_refusals(*inner[0], staged, vouched, written, strings)
    if _HEREDOC.search(arguments) and name in ("run", "copy", "add", "cmd", "entrypoint"):
        return [Refusal("syntax", f"`{name.upper()} {clip(arguments, 40)}` holds a heredoc, not read here")]
    flags, rest = _flags(arguments)
    refused = [r for flag in flags if (r := _flag_refusal(name, flag)) is not None]
    if name in ("run", "cmd", "entrypoint"):
        return refused + _command_refusals(rest, vouched, written)
    if name == "healthcheck":
        if rest.upper() == "NONE":
            return refused
        command = rest.split(None, 1)
        if not command or command[0].upper() != "CMD":
            return [*refused, Refusal("syntax", f"`HEALTHCHECK {clip(rest, 40)}` runs no command")]
        return refused + _command_refusals(command[1] if len(command) > 1 else "", vouched, written)
    if name == "add":
        strings += _words(rest)[:-1]  # its sources: a URL or a repository is a link
    elif name in ("label", "maintainer"):
        strings += _words(rest)
    elif name == "user":
        user = rest.split(":", 1)[0].strip()
        if user.lower() in _ROOT or "$" in user or not user:
            refused.append(Refusal("privilege", f"`USER {clip(rest, 40)}` runs what follows as root"))
    elif name == "shell":
        words = _exec_form(rest)
        if not words or words[0] not in _SHELLS or not all(w.startswith("-") or w in _SHELL_OPTIONS for w in words[1:]):
            refused.append(Refusal("program", f"`SHELL {clip(rest, 40)}` runs commands with a program not known"))
    elif name == "env" or (name == "arg" and staged):
        refused += _setting_refusals(name, rest, vouched, strings)
    return refused


def _flags(arguments: str) -> tuple[list[str], str]:
    """The `--flag=value` words an instruction opens with, and the rest of its arguments."""
    flags: list[str] = []
    rest = arguments
    while rest.startswith("--"):
        flag, _, rest = rest.partition(" ")
        flags.append(flag)
        rest = rest.lstrip()
    return flags, rest


def _flag_refusal(name: str, flag: str) -> Refusal | None:
    """The refusal of one flag of an instruction: any flag not on its list, a mount of a secret or an agent's key,
    a network other than the default or none."""
    option, _, value = flag.partition("=")
    if option not in _FLAGS.get(name, ()):
        return Refusal("bypass", f"`{name.upper()} {clip(flag, 40)}` is a flag lessons do not pass")
    if option == "--mount":
        kinds = [part.partition("=")[2] for part in value.split(",") if part.startswith("type=")]
        if not kinds or kinds[0] not in _MOUNTS:
            return Refusal("bypass", f"`{clip(flag, 40)}` hands the build step more than files")
    if option == "--network" and value not in _NETWORKS:
        return Refusal("bypass", f"`{clip(flag, 40)}` gives the build step another network")
    return None


def _exec_form(rest: str) -> list[str] | None:
    """The words of an exec-form argument (`["npm", "start"]`), or None when it is written in shell form."""
    if not rest.startswith("["):
        return None
    try:
        words = json.loads(rest)
    except ValueError:
        return None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        return None
    return words


def _command_refusals(rest: str, vouched: Vouched, written: set[str]) -> list[Refusal]:
    """A command a `RUN` (or a container's start) runs, in exec or shell form, judged by the allow-list."""
    words = _exec_form(rest)
    command = shlex.join(words) if words is not None else rest
    if not command.strip():
        return [Refusal("syntax", "an instruction that runs a command names none")]
    return command_refusals(command, vouched, written)


def _words(rest: str) -> list[str]:
    """The words of a shell-form or exec-form argument list."""
    words = _exec_form(rest)
    if words is not None:
        return words
    try:
        return shlex.split(rest)
    except ValueError:
        return rest.split()


def _setting_refusals(name: str, rest: str, vouched: Vouched, strings: list[str]) -> list[Refusal]:
    """Variables an `ENV` or `ARG` sets for the commands after it, judged as the allow-list judges a variable set
    before a command (`NODE_TLS_REJECT_UNAUTHORIZED=0` switches a safeguard off)."""
    words = _words(rest)
    if name == "env" and words and "=" not in words[0]:  # the old form: `ENV NAME value with spaces`
        words = [f"{words[0]}={' '.join(words[1:])}"]
    settings = [w for w in words if "=" in w]  # an `ARG NAME` with no default sets nothing
    strings += [w.partition("=")[2] for w in settings]
    if not settings:
        return []
    line = " ".join(shlex.quote(w.partition("=")[0]) + "=" + shlex.quote(w.partition("=")[2]) for w in settings)
    found = command_refusals(f"{line} true", vouched)
    return [r for r in found if r.rule in ("environment", "bypass")]
