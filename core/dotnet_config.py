"""Where `dotnet` restores packages and finds its SDK from.

As a project's nuget.config, MSBuild props and global.json say. `dotnet test` restores the project's packages
first, and runs what it restores (analyzers, build targets, test adapters): a nuget.config that names another feed,
or lets one be reached over plain http, an MSBuild property that adds restore sources, and global.json's `sdk.paths`
(an SDK from a folder of the project's choosing) change what runs. Only nuget.org's feed over https is admitted;
anything else holds every `dotnet` command.
"""

from __future__ import annotations

import json

import re2

from core.recipes import Recipe, unread

__all__ = ["directory_props_recipes", "global_json_recipes", "nuget_config_recipes"]

_NUGET_ORG = "https://api.nuget.org/v3/index.json"
_ADD = re2.compile(r"(?is)<add\b([^>]*)>")
_ATTRIBUTE = re2.compile(r"""(?is)\b([A-Za-z_:][A-Za-z0-9_.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_SECTION = re2.compile(
    r"(?is)<disabledPackageSources\b.*?</disabledPackageSources\s*>|<packageSourceMapping\b.*?</packageSourceMapping\s*>"
)
_MOST = 8


def nuget_config_recipes(text: str) -> list[Recipe]:
    """nuget.config: every `<add>` (a feed, a setting, a credential) other than nuget.org's feed over https, and any
    `allowInsecureConnections`, holds every `dotnet` command; a feed disabled by name is admitted."""
    why: list[str] = []
    if "allowinsecureconnections" in text.lower():
        why.append("nuget.config allows insecure connections")
    # A section that only disables feeds or maps packages to them names no place to fetch from.
    rest = _SECTION.sub("", text)
    for match in _ADD.finditer(rest):
        attributes = {m.group(1).lower(): m.group(2) or m.group(3) or "" for m in _ATTRIBUTE.finditer(match.group(1))}
        value = attributes.get("value", "")
        if value.strip().rstrip("/") == _NUGET_ORG.rstrip("/"):
            continue
        why.append(f"nuget.config adds `{attributes.get('key', '?')[:30]}` = `{value[:40]}`")
    return [unread("dotnet", w) for w in why[:_MOST]]


# MSBuild properties that say where a restore fetches packages from, or which nuget.config it reads.
_RESTORE = re2.compile(
    r"(?i)<(RestoreSources|RestoreAdditionalProjectSources|RestoreFallbackFolders|RestoreAdditionalProjectFallbackFolders"
    r"|RestoreConfigFile|RestorePackagesPath|NuGetAudit(?:Sources)?|RestoreIgnoreFailedSources)\b"
)


def directory_props_recipes(text: str) -> list[Recipe]:
    """Directory.Build.props (and .targets): a property that adds restore sources or another nuget.config holds every
    `dotnet` command."""
    found = {m.group(1) for m in _RESTORE.finditer(text)}
    return [unread("dotnet", f"the project's MSBuild props set `{name}`: where a restore fetches from") for name in
            sorted(found)[:_MOST]]  # fmt: skip


def global_json_recipes(text: str) -> list[Recipe]:
    """global.json: `sdk.paths` (an SDK from folders of the project's choosing) holds every `dotnet` command."""
    data = json.loads(text)
    sdk = data.get("sdk") if isinstance(data, dict) else None
    if isinstance(sdk, dict) and "paths" in sdk:
        return [unread("dotnet", "global.json's `sdk.paths` picks the SDK dotnet runs from folders of its own")]
    return []
