"""Local utilities with options that run programs or reach elsewhere: find, fd, sort, rg, printf, cd, curl, rm."""

from __future__ import annotations

from pathlib import PurePosixPath

from core.program_calls import Call, Refused, clip, long_option, value_flags

__all__ = ["cd", "curl", "fd", "find", "printf", "rg", "rm", "sort"]


def find(call: Call) -> Refused:
    """find: never an action that runs, deletes or writes (`-exec`, `-delete`, `-fprint`)."""
    bad = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fprint0", "-fls"} & set(call.args)
    return [("inline_code", f"`find {sorted(bad)[0]}` runs, deletes or writes")] if bad else []


def fd(call: Call) -> Refused:
    """fd: never `--exec`, which runs a command."""
    if any(
        a in ("-x", "--exec", "-X", "--exec-batch") or a.startswith(("--exec=", "--exec-batch=")) for a in call.args
    ):
        return [("inline_code", "`fd --exec` runs a command")]
    return []


def sort(call: Call) -> Refused:
    """sort: never `--compress-program`, which runs a program."""
    return (
        [("inline_code", "`sort --compress-program` runs a program")]
        if any(long_option(a, "--compress-program", 4) for a in call.args)
        else []
    )


def rg(call: Call) -> Refused:
    """rg: never `--pre`, which runs a program on every file."""
    if any((long_option(a, "--pre", 5) and not long_option(a, "--pre-glob", 6)) or a == "--pre" for a in call.args):
        return [("inline_code", "`rg --pre` runs a program on every file")]
    return []


def printf(call: Call) -> Refused:
    """printf: never `-v`, which assigns through the shell's arithmetic."""
    return [("inline_code", "`printf -v` assigns through the shell's arithmetic")] if "-v" in call.args else []


def cd(call: Call) -> Refused:
    """cd: to a folder it names, never home or back (no folder, `~`, `-`)."""
    words = call.positionals()
    if not words or words[0] in ("-", "~") or words[0].startswith("~"):
        return [("path", "`cd` with no folder (or `-`, `~`) leaves the project")]
    return []


_CURL_SAFE = frozenset(
    "-s -S -f -L -i -I -v -G --silent --show-error --fail --fail-with-body --location --include --head --verbose"
    " --get --compressed -X --request -H --header -o --output -w --write-out -m --max-time --connect-timeout"
    " -d --data --data-raw --json".split()
)


def curl(call: Call) -> Refused:
    """curl: only the options that shape a request and read its answer; never a file sent (`-d @file`), the
    certificate check off, nor any other option."""
    found: Refused = []
    args = list(call.args)
    for i, arg in enumerate(args):
        if not arg.startswith("-"):
            continue
        name = arg.split("=", 1)[0]
        if name in _CURL_SAFE or (not arg.startswith("--") and set(arg[1:]) <= set("sSfLiIvG")):
            value = args[i + 1] if i + 1 < len(args) and name in value_flags("curl") else ""
            if value.startswith("@"):
                found.append(("path", f"`curl {name} @{clip(value[1:])}` sends a file"))
            continue
        if long_option(arg, "--insecure", 5) or (not arg.startswith("--") and "k" in arg):
            found.append(("bypass", f"`curl {clip(arg)}` does not check the server's certificate"))
        else:
            found.append(("link", f"`curl {clip(arg)}` is not an option lessons may pass (it can send data elsewhere)"))
    return found


def rm(call: Call, build_folders: frozenset[str]) -> Refused:
    """rm: a recursive or forced removal only of build folders (`build_folders`) and `*.egg-info`."""
    flags = [a for a in call.args if a.startswith("-")]
    strong = any(
        (f.startswith("--") and any(long_option(f, n, 4) for n in ("--recursive", "--force", "--dir")))
        or (not f.startswith("--") and set(f[1:]) & set("rRfd"))
        for f in flags
    )
    if not strong:
        return []
    for target in (a for a in call.args if not a.startswith("-")):
        name = PurePosixPath(target.rstrip("/")).name
        if name not in build_folders and not target.endswith(".egg-info"):
            return [("bypass", f"`rm {' '.join(flags)}` outside a build folder (`{clip(target)}`)")]
    return []
