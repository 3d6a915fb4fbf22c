"""The project's servers, frameworks and containers: Jupyter, Flask, Django, Rails, artisan, docker and compose.

They serve or hold what the project runs: never a console or a debugger to the network, never code given inline
(`rails runner`, `manage.py shell -c`, `artisan tinker`), never a command run in a container.
"""

from __future__ import annotations

import re2

from core.program_calls import Call, Refused, clip, long_option, option_values

__all__ = ["artisan", "django", "docker", "flask", "jupyter", "listens_on", "rails"]


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]", "ip6-localhost"})


def listens_on(value: str) -> bool:
    """True when a host (or `host:port`) to serve on is more than this machine (`0.0.0.0`, `*`, `::`, an address)."""
    host = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
    return host.lower() not in _LOOPBACK and not host.isdigit()


_NOTEBOOK_OFF = re2.compile(
    r"(?i)^--(?:\w+\.)?(?:token|password|password_required|disable_check_xsrf|allow_origin|allow_remote_access"
    r"|allow_unauthenticated_access)$"
)


def jupyter(call: Call) -> Refused:
    """Jupyter serves a shell to whoever reaches it: never with its token or password off, and never an extension
    installed by name."""
    args = list(call.args)
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if not eq and _NOTEBOOK_OFF.match(name) and i + 1 < len(args):
            value = args[i + 1]
        if (
            _NOTEBOOK_OFF.match(name)
            and (
                value in ("", "''", '""', "*") or (value.lower() in ("false", "true") and not name.endswith("required"))
            )
        ) or (name.endswith("password_required") and value.lower() == "false"):
            return [("bypass", f"`jupyter {clip(arg)}` lets anyone who reaches it run code")]
    words = call.positionals()
    if words[:1] in (["labextension"], ["nbextension"], ["serverextension"], ["kernelspec"]) and words[1:2] in (
        ["install"], ["enable"],
    ):  # fmt: skip
        return [("install", f"`jupyter {words[0]} install` installs an extension by name")]
    return []


def flask(call: Call) -> Refused:
    """`flask run --debug` serves Werkzeug's debugger, a Python console: only on this machine."""
    debug = any(long_option(a, "--debug", 5) or a == "--debugger" for a in call.args)
    hosts = option_values(call.args, "--host", "-h")
    if debug and any(listens_on(h) for h in hosts):
        return [("bypass", "`flask run --debug` on every interface serves a Python console to the network")]
    return []


def django(call: Call) -> Refused:
    """`manage.py` and `django-admin`: `shell -c` and `dbshell` run what they are given."""
    words = call.positionals()
    if words[:1] in (["shell"], ["dbshell"]) and (words[0] == "dbshell" or {"-c", "--command"} & set(call.args)):
        return [("inline_code", f"`{call.family} {words[0]}` runs code given inline")]
    return []


def artisan(call: Call) -> Refused:
    """Laravel's artisan: never `tinker`, which runs code given inline."""
    words = call.positionals()
    if words[:1] == ["tinker"]:
        return [("inline_code", "`artisan tinker` runs code given inline")]
    return []


def rails(call: Call) -> Refused:
    """rails: never `runner`, which runs code given inline."""
    words = call.positionals()
    return [("inline_code", "`rails runner` runs code given inline")] if words[:1] in (["runner"], ["r"]) else []


_COMPOSE_ALLOWED = frozenset("up down ps logs build restart stop start config pull images top version ls".split())
_DOCKER_ALLOWED = frozenset("build ps logs images version info".split())


def docker(call: Call) -> Refused:
    """docker and docker compose: build, start and stop the project's own services, read their logs; never run a
    command in a container (`exec`, `run`), which holds the project's secrets and can be given the host."""
    words = call.positionals()
    compose = call.family == "docker-compose" or words[:1] == ["compose"]
    if compose:
        words = words[1:] if words[:1] == ["compose"] else words
        allowed = _COMPOSE_ALLOWED
    else:
        allowed = _DOCKER_ALLOWED | {"compose"}
    if any(long_option(a, "--push", 4) or ("push=true" in a or "type=registry" in a) for a in call.args):
        return [("program", "`docker build --push` publishes the image: the user's call")]
    if not words or words[0] in allowed:
        if any(long_option(a, "--privileged", 6) or a.startswith(("--pid=host", "--network=host")) for a in call.args):
            return [("bypass", "`docker --privileged` gives a container the host")]
        return []
    return [("inline_code", f"`docker {clip(words[0])}` runs a command in a container")]
