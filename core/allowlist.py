"""What a lesson may tell an agent to run: an allow-list decided on the shell's own parse (`core.shell`).

A command is admitted when every simple command in it is admitted and nothing joins them but `&&`, `||`, `;` and
pipes into filters. A simple command is admitted when:

- its program is written as a plain word (not `c\\url`, `'cu'rl`, `$CMD`), and is a known build, test, lint or
  package toolchain, a local file utility, a program the project declares or the user's own prompts run, or a
  script inside the project (`./gradlew`, `scripts/test.sh`); never `sudo` and its kind, never a program whose job
  is to run another (`eval`, `xargs`, `env`);
- a pipe feeds it only if it is a filter (`tail`, `grep`, `jq`, ...): output is never piped into a shell or an
  interpreter;
- its words are literal (no `$(...)`, backticks, `<(...)`, `$VAR`, brace expansion), and a `NAME=value` before it
  sets only a variable known to choose a mode (`NODE_ENV=production`, `MIX_ENV=test`), to a plain value;
- every path it names stays inside the project (relative, no `..`, no `~`, nothing absolute but `/dev/null`) and
  names no secret-bearing dotfile; what it writes (a redirection, `cp`'s target, `tee`) is no dotfile, hook or file
  a tool runs as configuration;
- no flag weakens a safeguard (`--force`, `--no-verify`, `--break-system-packages`, another registry or index, a
  certificate check off, `git push +ref`, `git reset --hard`, `-rf` anywhere but a build folder);
- the program's own policy admits it (`core.programs`): an interpreter runs a file or a module, never code given
  inline; a package manager installs no package the project does not declare; git and gh run no command through
  their options and reach no other repository;
- a link it names leads to a host the lesson may name (`core.links`): none in a keyless lesson, in a model's lesson
  only loopback or a host the user's own prompts named;
- a task of the project it runs (`make test`, `npm run build`) runs only what this list admits (`core.task_judge`).

Anything else is refused with the rule that refused it, and the entry waits in `playbook review`. Pure functions.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Literal

import re2

from core.links import Link, find_links, vouched_host
from core.policy_git import remote_hosts as _remote_hosts
from core.program_calls import Call, positionals, value_flags
from core.programs import (
    FILTERS,
    INTERPRETERS,
    KNOWN,
    PRIVILEGE,
    RUNS_ANYTHING,
    SHELLS,
    known_program,
    policy_refusals,
    program_family,
    wrapped_command,
)
from core.project_paths import BUILD_FOLDERS, PROJECT_DOTFILES, path_problem, write_problem
from core.refusal import Refusal
from core.shell import SimpleCommand, parse_command
from core.task_judge import task_refusals
from core.vouched import Declared, Vouched

__all__ = [
    "BUILD_FOLDERS",
    "PROJECT_DOTFILES",
    "CommandRule",
    "Declared",
    "Refusal",
    "Vouched",
    "bypass_flag",
    "command_refusals",
    "is_program",
    "link_refusals",
    "path_refusal",
    "words_refusals",
]

CommandRule = Literal[
    "syntax", "program", "privilege", "pipe", "inline_code", "substitution", "environment", "path", "bypass",
    "install", "link",
]  # fmt: skip


# Variables a command may be given before it: they choose a mode or a format, and name no program, path or host.
_SAFE_VARIABLES = frozenset(
    "NODE_ENV RAILS_ENV RACK_ENV MIX_ENV APP_ENV FLASK_ENV FLASK_DEBUG DJANGO_DEBUG ENV ENVIRONMENT CI DEBUG LOG_LEVEL"
    " RUST_LOG RUST_BACKTRACE FORCE_COLOR NO_COLOR TERM COLUMNS TZ LANG LC_ALL GOOS GOARCH CGO_ENABLED PORT"
    " PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONHASHSEED PYTHONWARNINGS HYPOTHESIS_PROFILE VERBOSE QUIET"
    " NODE_NO_WARNINGS BROWSER HEADLESS".split()
)
_MODE = re2.compile(r"^(?:[ugoa]*[-+=][rwxXst]*|[0-7]{3,4})$")
# Variables whose value is a folder of the project (`PYTHONPATH=src`): admitted when the path rules admit it.
_PATH_VARIABLES = frozenset("PYTHONPATH NODE_PATH UV_PROJECT_ENVIRONMENT".split())
# Settings admitted only at values that keep a tool to what the project locked and the machine has (no download,
# no network, no change to the lock: `UV_PYTHON_DOWNLOADS=never`, as a Makefile exports it) or only choose a mode;
# any other value of them changes what is fetched and run.
_SETTINGS_AT = {
    "UV_COMPILE_BYTECODE": frozenset({"0", "1", "true", "false"}),
    "UV_PYTHON_DOWNLOADS": frozenset({"never", "manual"}),
    "UV_OFFLINE": frozenset({"1", "true"}),
    "UV_FROZEN": frozenset({"1", "true"}),
    "UV_LOCKED": frozenset({"1", "true"}),
    "UV_NO_SYNC": frozenset({"1", "true"}),
    "PIP_REQUIRE_VIRTUALENV": frozenset({"1", "true"}),
    "PIP_NO_INPUT": frozenset({"1", "true"}),
    "PIP_DISABLE_PIP_VERSION_CHECK": frozenset({"1", "true"}),
    "NPM_CONFIG_OFFLINE": frozenset({"true"}),
    "CARGO_NET_OFFLINE": frozenset({"true"}),
    "GOFLAGS": frozenset({"-mod=readonly", "-mod=vendor"}),
}
# Files that hold secrets by their name: a command naming one reads, copies or sends them.
_SECRET_FILE = re2.compile(
    r"(?i)(?:^|/)(?:\.env(?:\.[\w.-]+)?|\.envrc|master\.key|credentials[\w.-]*|id_(?:rsa|dsa|ecdsa|ed25519)[\w.-]*"
    r"|[\w.-]+\.(?:pem|key|p8|p12|pfx|jks|keystore|bks|tfstate|tfstate\.backup|tfvars|tfvars\.json|kdbx|secret|ppk"
    r"|ovpn|gpg|kubeconfig)|(?:[\w-]+[-_.])?secrets?(?:[-_.][\w.-]+)?\.(?:ya?ml|json|toml|env|properties|enc|ini|conf)"
    r"|database\.ya?ml|kubeconfig|\.?htpasswd|\.pgpass|\.netrc|\.git-credentials|wp-config\.php"
    r"|service[-_]?account[\w.-]*\.json|[\w.-]*-sa-key\.json|local\.settings\.json|[\w.-]+\.auto\.tfvars)$"
)
_WORLD_WRITABLE = re2.compile(r"^(?:[0-7]?[0-7][0-7][2367]|[ugo]*a[ugo]*\+[rwxXst]*w|[ugo]*o[ugo]*\+[rwxXst]*w)$")
# Node's options that size or quiet it, never load code (`--require`, `--import`, `--loader` do).
_SAFE_NODE_OPTION = re2.compile(
    r"^--(?:max-old-space-size=\d+|max-semi-space-size=\d+|enable-source-maps|no-warnings|trace-warnings"
    r"|stack-size=\d+|unhandled-rejections=\w+|no-deprecation|trace-deprecation)$"
)
_PLAIN_VALUE = re2.compile(r"^[A-Za-z0-9_.:,+-]*$")
# Long options that switch a safeguard off, whatever program takes them: (the option, the shortest abbreviation
# accepted for it). An abbreviation no shorter than that counts as the option (`--no-verif`).
_BYPASS_LONG = (
    ("--force", 6), ("--force-with-lease", 9), ("--no-verify", 7), ("--break-system-packages", 8),
    ("--no-preserve-root", 9), ("--insecure", 7), ("--no-check-certificate", 16), ("--allow-unauthenticated", 10),
    ("--unsafe-perm", 9), ("--dangerously-skip-permissions", 9), ("--dangerously-bypass-approvals-and-sandbox", 9),
    ("--trusted-host", 10), ("--registry", 10), ("--index-url", 11), ("--extra-index-url", 12), ("--allow-root", 11),
    ("--no-sandbox", 10), ("--yolo", 6), ("--skip-verify", 11), ("--disable-ssl-verification", 12),
    ("--ignore-certificate-errors", 14), ("--no-verify-ssl", 13), ("--allow-insecure", 12), ("--admin", 7),
    ("--permission-mode", 12), ("--disable-verification", 12), ("--strict-ssl", 12), ("--no-strict-ssl", 12),
    ("--privileged", 12),  # a container with every capability of the machine it runs on
)  # fmt: skip
# Option names and settings that turn a check off when set to false (`--strict-ssl=false`, `-Dssl.verify=false`).
_CHECK_WORDS = re2.compile(r"(?i)ssl|tls|cert|verify|strict|checksum|sumdb|trust")
_OFF = frozenset({"false", "0", "no", "off", "none", "disable", "disabled"})
_PROGRAM_SHAPE = re2.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+-]*$")
_CREATES_ONLY = frozenset({"touch", "mkdir", "rm", "rmdir", "chmod"})  # they write no text of their choosing
# Programs whose `-o`/`--output` names the file they write (elsewhere `-o` is anything: `pytest -o ini=value`).
_WRITES_OUTPUT = frozenset("curl gcc g++ cc c++ clang clang++ sort go zig rustc pandoc".split())
# Programs that may be given text on their input (`<`, `<<`, `<<<`): they read it as text, never run it.
_READS_INPUT = FILTERS | frozenset({"cat", "git", "gh", "diff", "cmp"})
# The programs whose first positional is a pattern or a filter, not a path (`jq '.version' package.json`).
_PATTERN_FIRST = frozenset("jq yq grep egrep fgrep rg ag".split())


def is_program(name: str, vouched: Vouched) -> bool:
    """True when `name` is a program the allow-list knows of (to run or to refuse), or one the user vouched for."""
    family = program_family(name)  # asked of every word of every lesson's prose: one lookup, not two
    return family in KNOWN or family in vouched.programs


def path_refusal(word: str, *, mention: bool = False) -> Refusal | None:
    """The refusal for a path that leaves the project or names a dotfile that is no project file
    (`core.project_paths.path_problem`); None for anything else."""
    problem = path_problem(word, mention=mention)
    return Refusal("path", problem) if problem else None


def _write_refusal(target: str, *, content: bool = True, artefact: bool = False) -> Refusal | None:
    """The refusal for a file a command writes (`core.project_paths.write_problem`)."""
    problem = write_problem(target, content=content, artefact=artefact)
    return Refusal("path", problem) if problem else None


def _clip(text: str, most: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def bypass_flag(arg: str) -> str | None:
    """The safeguard `arg` switches off, if it does: a bypass option (or its accepted abbreviation), or a check's
    option or setting given a false value."""
    name, _, value = arg.partition("=")
    low = name.lower()
    if low.startswith("--"):
        for option, shortest in _BYPASS_LONG:
            if len(low) >= shortest and option.startswith(low):
                return option
    if value.lower() in _OFF and _CHECK_WORDS.search(name):
        return name
    return None


def link_refusals(links: Iterable[Link], vouched: Vouched) -> list[Refusal]:
    """Why each of `links` may not reach an agent: no readable host, any link in a keyless lesson, or a host that is
    neither local nor named in the user's prompts."""
    found = []
    for link in links:
        if link.host is None:
            found.append(Refusal("link", link.problem or f"`{_clip(link.written)}` names no readable host"))
        elif link.problem:  # a readable host, disguised as another (`https://docs.python.org@x.example/`)
            found.append(Refusal("link", link.problem))
        elif not vouched.links:
            found.append(Refusal("link", f"a keyless lesson carries no link (`{_clip(link.written)}`)"))
        elif not vouched_host(link, vouched.hosts):
            found.append(Refusal("link", f"links to {link.host}, named in none of the user's prompts"))
    return found


@dataclass
class _Judge:
    vouched: Vouched
    found: list[Refusal] = field(default_factory=list)
    written: set[str] = field(default_factory=set)  # files the line's earlier commands wrote
    depth: int = 0  # how many tasks' recipes deep this line is (`make test` runs `make build` runs ...)
    # Where the line's tasks may run: the project's folder (""), the folders the lesson names, and those a `cd`
    # before them goes to (each judged: `(cd sub && make build) && make test` runs `test` at the top).
    places: set[str] = field(default_factory=set)
    as_folders: set[str] = field(default_factory=set)  # those written as folders (`sub/`, or gone to by `cd`)

    def __post_init__(self) -> None:
        self.places |= {""} | {f for f in map(_relative_folder, self.vouched.folders) if f is not None}
        # One written as a folder that playbook did not see is no file's name: a folder it did not read.
        self.as_folders |= {f for w in self.vouched.folders if w.endswith("/") and (f := _relative_folder(w))}

    def refuse(self, rule: str, detail: str) -> None:
        self.found.append(Refusal(rule, detail))

    def simple(self, command: SimpleCommand) -> None:
        if command.words and command.words[0] == "cd":
            folders = [w for w in command.words[1:] if w is not None and not w.startswith("-")]
            folder = _relative_folder(folders[0]) if len(folders) == 1 else None
            if folder is not None:  # (any other `cd` is refused as a path)
                gone = {f"{p}/{folder}" if p else folder for p in self.places}
                self.places |= gone
                self.as_folders |= gone
        for assignment in command.assignments:
            name, _, value = assignment.partition("=")
            if name in _PATH_VARIABLES and _PLAIN_VALUE.match(value.replace("/", "")):
                if all(path_refusal(part) is None for part in value.split(":")):
                    continue
            if name == "NODE_OPTIONS" and all(_SAFE_NODE_OPTION.match(o) for o in value.split()):
                continue
            if value in _SETTINGS_AT.get(name, ()):
                continue
            if name not in _SAFE_VARIABLES or not _PLAIN_VALUE.match(value):
                self.refuse("environment", f"`{_clip(assignment)}` is set before `{command.written}`")
        message = _message_command(command)
        for sub in command.substitutions:
            if not (message and _commit_message(sub.commands, sub.constructs)):
                self.refuse("substitution", f"`{_clip(sub.text)}` runs a command inside another")
        family = program_family(command.written) if command.words and command.words[0] else ""
        for redirect in command.redirects:
            if redirect.operator.endswith("&") and (redirect.target or "").isdigit():
                continue
            if redirect.heredoc or redirect.operator == "<<<" or redirect.operator.startswith("<"):
                # Only a program that reads text as text may be given it on its input: any other (an interpreter,
                # a console, a wrapper of one) would run it.
                if family not in _READS_INPUT:
                    self.refuse("inline_code", f"`{family}` is given what to do on its input")
                elif redirect.target and not redirect.heredoc and (refused := path_refusal(redirect.target)):
                    self.found.append(refused)
                continue
            if redirect.target is None:
                self.refuse("substitution", f"a redirection to an expanded name (`{redirect.operator}`)")
            elif (refused := _write_refusal(redirect.target)) is not None:
                self.found.append(refused)
        words = command.words
        if any(w is None for w in words):
            shown = "the program" if words[0] is None else "an argument"
            if not message or words[0] is None:
                self.refuse("substitution", f"{shown} of `{_clip(command.written)}` is expanded when it runs")
            if words[0] is None:
                return
        literal = [w for w in words if w is not None]
        self.program(command.written, literal[0], literal[1:], piped=command.piped)
        # What this command writes: a later command of the line that runs or reads it runs what was just written.
        self.written.update(_spelled(r.target) for r in command.redirects if r.target and ">" in r.operator)
        family = program_family(literal[0])
        if family not in _CREATES_ONLY:
            self.written.update(_spelled(w) for w in _written_by(family, literal[1:]))

    def program(self, written: str, program: str, args: list[str], *, piped: bool) -> None:
        if written != program or not program:
            self.refuse("syntax", f"the program `{_clip(written)}` is spelled with quotes or escapes")
            return
        name = PurePosixPath(program).name
        family = program_family(program)
        self.found.extend(link_refusals((k for a in args if not _plain(a) for k in find_links(a)), self.vouched))
        call = Call(family, tuple(args), self.vouched.programs, self.vouched.packages)
        for host in _remote_hosts(call):
            self.found.extend(link_refusals(find_links(f"ssh://{host}/"), self.vouched))
        for word in _fetched_words(family, args):  # `curl evil.sh`, `go run evil.sh`: a host with no scheme
            self.found.extend(link_refusals(find_links(f"http://{word}"), self.vouched))
        if family in PRIVILEGE:
            self.refuse("privilege", f"`{name}` runs a command as another user")
            return
        if family in RUNS_ANYTHING:
            self.refuse("inline_code", f"`{name}` runs whatever it is given")
            return
        if piped and family not in FILTERS:
            what = "an interpreter" if family in INTERPRETERS or family in SHELLS else "a program that is no filter"
            self.refuse("pipe", f"output is piped into `{name}`, {what}")
        if "/" in program:
            refused = path_refusal(program)
            if refused is not None:
                self.found.append(refused)
                return
        elif not _PROGRAM_SHAPE.match(program):
            self.refuse("syntax", f"`{_clip(program)}` is not a program name")
            return
        elif not known_program(family) and name not in self.vouched.programs:
            self.refuse("program", f"`{name}` is neither a known toolchain nor a program the project declares")
            return
        if self.written and any(_names_written(w, self.written, family) for w in [program, *args]):
            self.refuse("inline_code", f"`{name}` runs or reads a file the same command line just wrote")
        self.arguments(family, args)
        for rule, detail in policy_refusals(call, BUILD_FOLDERS):
            self.refuse(rule, detail)
        inner = wrapped_command(call)
        if isinstance(inner, list):
            for rule, detail in inner:
                self.refuse(rule, detail)
        elif inner is not None:
            self.program(inner[0], inner[0], inner[1], piped=False)
        # With nothing of the project read, a folder the lesson runs in is still judged: a hidden one or a
        # dependency's holds it (round 9: `node build.js` from `.git/hooks/`).
        if self.vouched.tasks or self.as_folders:
            places, as_folders = frozenset(self.places), frozenset(self.as_folders)
            self.found += task_refusals(
                call, self.vouched, _line_refusals, depth=self.depth, places=places, as_folders=as_folders
            )

    def arguments(self, family: str, args: list[str]) -> None:
        """Paths, write targets and bypass flags among `args`."""
        first_positional = next((i for i, a in enumerate(args) if not a.startswith("-")), -1)
        for i, arg in enumerate(args):
            if arg == "--":
                continue
            if arg.startswith("-"):
                bypass = bypass_flag(arg)
                if bypass is not None:
                    self.refuse("bypass", f"`{_clip(arg)}` ({bypass}) switches a safeguard off")
                refused = path_refusal(arg) if "=" in arg else None
                if refused is None and len(arg) > 2 and arg[1] != "-" and arg[:2] in value_flags(family):
                    refused = path_refusal(arg[2:])  # a short flag's value written on it: `make -C/`, `-I../x`
                value = arg.split("=", 1)[1] if "=" in arg else ""
                if refused is None and value and _SECRET_FILE.search(value) and not _template(value):
                    refused = Refusal("path", f"`{_clip(value)}` holds secrets: lessons do not read, copy or send it")
            elif "://" in arg or (i == first_positional and family in _PATTERN_FIRST):
                continue
            elif family == "chmod" and _WORLD_WRITABLE.match(arg):
                self.refuse("bypass", f"`chmod {arg}` lets anyone write the files")
                continue
            elif _plain(arg):
                continue  # a word of letters, digits, `_` and `-`: no path, no link, no flag
            else:
                refused = path_refusal(arg)
                if refused is None and _SECRET_FILE.search(arg) and not _template(arg):
                    refused = Refusal("path", f"`{_clip(arg)}` holds secrets: lessons do not read, copy or send it")
            if refused is not None:
                self.found.append(refused)
        outputs = set(_outputs(family, args))
        for target in _written_by(family, args):
            creates_only = family in _CREATES_ONLY
            if (refused := _write_refusal(target, content=not creates_only, artefact=target in outputs)) is not None:
                self.found.append(refused)


_GLOB = re2.compile(r"[*?\[]")
# Programs that read or record a folder's files without running them: a folder (`git add .`, `ls build`) that holds
# a file just written is no run of it (naming the file itself still counts).
_READS_FOLDERS = frozenset("git ls du tree find fd stat file".split())
_ONLY_READS = frozenset("cat head tail wc grep egrep fgrep rg less more diff cmp sort uniq column nl".split())


def _spelled(word: str) -> str:
    """A path as the file system reads it: an option's value (`--config=x`), `./` and `//` collapsed, case folded
    (macOS and Windows read `NOTES.TXT` as `notes.txt`); `` for the folder itself."""
    value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    value = value.removeprefix("@").replace("\\", "/")
    return "/".join(p for p in value.split("/") if p not in ("", ".")).lower()


def _names_written(word: str, written: set[str], family: str) -> bool:
    """True when `word` (a program or an argument) names a file the line wrote: that file however spelled
    (`./././x`, `x[s].txt`, `--file=x`), or a folder holding it (`pytest build`, `go test ./...`, `.`)."""
    if family in _ONLY_READS:
        return False  # shows the text it was given (`tail test.log`): runs none of it
    path = _spelled(word)
    if not path and word.split("=", 1)[-1] not in (".", "./"):
        return False  # no path at all (`-v`)
    if path in written:
        return True
    if _GLOB.search(path) and any(fnmatch.fnmatchcase(w, path) for w in written):
        return True
    if family in _READS_FOLDERS or (word.startswith("-") and "=" not in word):
        return False
    folder = path.removesuffix("...").rstrip("/")
    return any(not folder or w.startswith(folder + "/") for w in written)


def _template(name: str) -> bool:
    """A secret file's template, which holds no secret (`.env.example`, `terraform.tfvars.sample`)."""
    return name.endswith((".example", ".sample", ".template", ".dist"))


def _plain(word: str) -> bool:
    """ASCII letters, digits, `_` and `-`, not led by `-`: no path, no link, no flag (a word of a command is read
    here one at a time, so by str's own tests rather than a pattern call per word)."""
    return word.isascii() and word[:1] != "-" and word.replace("_", "0").replace("-", "0").isalnum()


def _fetched_words(family: str, args: list[str]) -> list[str]:
    """The words a program fetches from the network with no scheme written: curl's positionals, a Go module path
    (`go run evil.sh`, `-require=evil.sh@v1`), whose first segment is a host."""
    if family == "curl":
        return [w for w in positionals(args, "curl") if "://" not in w]
    if family != "go":
        return []
    found = []
    for arg in args:
        word = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        head = word.split("@", 1)[0].split("/", 1)[0]
        if (
            "." in head and not word.startswith((".", "/")) and not word.endswith(".go") and not arg.startswith("-")
        ) or (arg.startswith(("-require=", "-replace=", "-droprequire=")) and "." in head):
            found.append(head)
    return found


def _written_by(family: str, args: list[str]) -> list[str]:
    """The files a utility writes or removes: `cp`/`mv`/`ln`/`install`'s target, `tee`'s files, `touch`, `mkdir`,
    `chmod`, `rm` and `rmdir`'s operands, `-o`/`--output` values."""
    words = [a for a in args if not a.startswith("-")]
    found: list[str] = []
    if family in ("cp", "mv", "ln", "install") and len(words) >= 2:
        if not (words[-1].startswith(".env") and words[0] in (".env.example", ".env.sample", ".env.template")):
            found.append(words[-1])  # (the project's own `.env` from its template is no write to fear)
    if family == "git" and words[:1] == ["mv"] and len(words) >= 3:
        found.append(words[-1])
    if family in ("uniq", "xxd") and len(words) >= 2:  # `uniq IN OUT`, `xxd -r IN OUT`
        found.append(words[-1])
    if family == "yq" and any(a in ("-i", "--inplace") for a in args):
        found += words[1:]
    if family in ("tee", "touch", "mkdir", "rm", "rmdir"):
        found += words
    if family == "chmod":
        found += [w for w in words if not _MODE.match(w)]
    flags: tuple[str, ...] = ("-t", "--target-directory") if family in ("cp", "mv", "ln", "install") else ()
    return found + _flag_values(args, flags) + _outputs(family, args)


def _outputs(family: str, args: list[str]) -> list[str]:
    """What a compiler, a download or a converter writes with `-o`/`--output` (an artefact of its own making)."""
    return _flag_values(args, ("-o", "--output")) if family in _WRITES_OUTPUT else []


def _flag_values(args: list[str], flags: tuple[str, ...]) -> list[str]:
    found = []
    for i, arg in enumerate(args):
        if arg in flags and i + 1 < len(args):
            found.append(args[i + 1])
        elif "=" in arg and arg.split("=", 1)[0] in flags:
            found.append(arg.split("=", 1)[1])
    return found


def _message_command(command: SimpleCommand) -> bool:
    """True for a command whose expanded word can only be a message: `git commit -m "$(cat <<'EOF' ...)"`, a gh
    issue's or pull request's body."""
    words = [w for w in command.words]
    if not words or words[0] not in ("git", "gh"):
        return False
    for i, word in enumerate(words):
        if word is None:
            flag = words[i - 1] if i else None
            if flag not in ("-m", "--message", "-b", "--body", "-t", "--title"):
                return False
    return words[1:2] in (["commit"], ["tag"], ["pr"], ["issue"], ["release"])


def _commit_message(commands: Sequence[SimpleCommand], constructs: Sequence[str]) -> bool:
    """`$(cat <<'EOF' ... EOF)`: a commit message written as a heredoc, the one substitution lessons keep (it runs
    nothing but `cat` on the text that follows)."""
    return (
        len(commands) == 1
        and commands[0].words == ("cat",)
        and bool(commands[0].redirects)
        and all(r.heredoc for r in commands[0].redirects)
        and not constructs
    )


_INLINE_HEREDOC = re2.compile(r"<<-?\s*(['\"]?)(\w+)(['\"]?)\s+(.*?)\s+(\w+)\s*\)")


def _written_heredoc(line: str) -> str:
    """A heredoc written on one line, as prose writes it (`$(cat <<'EOF' ... EOF)`), in the lines a shell reads."""
    match = _INLINE_HEREDOC.search(line)
    if match is None or match.group(2) != match.group(5):
        return line
    start, end = match.span()
    tag = match.group(2)
    return f"{line[:start]}<<{match.group(1)}{tag}{match.group(3)}\n{match.group(4)}\n{tag}\n){line[end:]}"


def command_refusals(line: str, vouched: Vouched, written: set[str] | None = None) -> list[Refusal]:
    """Why the command `line` may not reach an agent (every rule that refuses it), or [] when it is admitted.
    `written`: the files earlier commands of the same lesson write (a later one that runs them runs what they wrote);
    this line's are added to it."""
    return _line_refusals(line, vouched, 0, written)


_FOLDER = re2.compile(r"^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*$")


def _relative_folder(written: str) -> str | None:
    """`written` as a folder below the project (`./web/` is `web`), or None: outside it, or no plain folder."""
    folder = written.removeprefix("./").rstrip("/")
    if not _FOLDER.match(folder) or any(part in (".", "..") for part in folder.split("/")):
        return None
    return folder


def _line_refusals(line: str, vouched: Vouched, depth: int, written: set[str] | None = None) -> list[Refusal]:
    parsed = parse_command(_written_heredoc(line) if "<<" in line else line)
    judge = _Judge(vouched, written=written if written is not None else set(), depth=depth)
    for construct in parsed.constructs:
        rule = "environment" if construct in ("variable assignment", "declaration command") else "syntax"
        judge.refuse(rule, f"a shell construct lessons do not run ({construct})")
    for command in parsed.commands:
        judge.simple(command)
    return _unique(judge.found)


def words_refusals(words: Sequence[str], vouched: Vouched, *, folder: str | None = None) -> list[Refusal]:
    """Why a command given as its words (a typed lesson's) may not reach an agent, or []."""
    judge = _Judge(vouched)
    if folder is not None and (refused := path_refusal(folder)) is not None:
        judge.found.append(refused)
    if words:
        judge.program(words[0], words[0], list(words[1:]), piped=False)
    return _unique(judge.found)


def _unique(found: list[Refusal]) -> list[Refusal]:
    return list(dict.fromkeys(found))
