"""The screen: what may reach an agent's context, checked before anything is published.

Transcripts hold web pages, tool output and text written by strangers, and a lesson is loaded by every agent at
the start of every session (the "rules file backdoor" / memory-poisoning class). An entry is **held** (never
exported, listed by `playbook review` with the rule that held it) when its text:

- runs code fetched from the network (`curl ... | sh`, `bash <(curl ...)`, `base64 -d | sh`, `eval "$(wget ...)"`);
- destroys what lies outside the project (`rm -rf ~`, `/`, `$HOME`, system folders; `mkfs`, `dd of=/dev/...`);
- touches credentials (`~/.ssh`, `~/.aws`, `.netrc`, `.git-credentials`, private keys, cloud and cluster configs);
- speaks to the agent over the user's head ("ignore previous instructions", "do not tell the user", ...);
- links to a host that never appears in the user's own prompts (loopback and reserved example hosts excepted);

or when what it rests on is weak: its only support is text the agent read (`tainted`), in a shared playbook fewer
than `min_contributors` contributors support it (`quorum`), or every session behind it was withdrawn by its
contributor (`withdrawn`). A hold is released only by an explicit approval of that very text (`playbook review
--release ID`). Pure functions: the store supplies the hosts, the support and the releases.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, Field

from core.models import Playbook

__all__ = [
    "Hold",
    "HoldRule",
    "Screened",
    "Support",
    "entry_holds",
    "screen_playbook",
    "text_holds",
    "text_key",
    "url_hosts",
]

HoldRule = Literal[
    "remote_exec", "destructive", "credential_path", "override", "unknown_host", "tainted", "quorum", "withdrawn"
]

_SHELLS = (
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+\S+=\S+\s+)*"
    r"(?:(?:ba|z|k|da|fi|c|tc)?sh|python[0-9.]*|perl|ruby|node|php|iex|pwsh|powershell)"
)
_FETCH = r"(?:curl|wget|fetch|http|https|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c|lwp-request)"
_REMOTE_EXEC = [
    re.compile(rf"\b{_FETCH}\b[^|\n]*\|\s*(?:{_SHELLS})\b", re.IGNORECASE),  # curl ... | sh
    # bash <(curl ...), source <(wget ...), sh -c "$(curl ...)", eval "$(wget ...)"
    re.compile(rf"(?:\b(?:{_SHELLS}|source)|(?:^|\s)\.)\s+<\(\s*{_FETCH}\b", re.IGNORECASE),
    re.compile(rf"\b(?:(?:{_SHELLS})\s+-c|eval)\s+[\"']?\$\(\s*{_FETCH}\b", re.IGNORECASE),
    re.compile(r"\bbase64\s+(?:-d|-D|--decode)\b[^|\n]*\|\s*(?:" + _SHELLS + r")\b", re.IGNORECASE),
    # download, then run or make runnable
    re.compile(
        rf"\b{_FETCH}\b[^\n]*?(?:-o|-O|--output)\s*\S+[^\n]*?(?:&&|;)\s*(?:{_SHELLS}|chmod\s+\+x)\b", re.IGNORECASE
    ),
]
_OUTSIDE = (
    r"(?:~|\$HOME|\$\{HOME\}|/|/\*|~/\S*|\$HOME/\S*"
    r"|/(?:etc|usr|bin|sbin|boot|var|lib|opt|home|root|Users|System|Library|dev)\b\S*)"
)
_DESTRUCTIVE = [
    re.compile(
        rf"\brm\s+(?:-{{1,2}}[\w-]+\s+)*-\w*[rRf]\w*\s+(?:-{{1,2}}[\w-]+\s+)*[\"']?{_OUTSIDE}[\"']?(?=\s|$|[;&|)`\"'])"
    ),
    re.compile(r"\bmkfs(?:\.\w+)?\s+/dev/", re.IGNORECASE),
    re.compile(r"\bdd\b[^\n]*\bof=/dev/(?:sd|hd|nvme|disk|mmcblk|vd)", re.IGNORECASE),
    re.compile(r">\s*/dev/(?:sd|hd|nvme|disk|vd)[a-z0-9]*"),
    re.compile(rf"\bch(?:mod|own)\b(?=[^\n]*\s-\w*R)[^\n]*?\s[\"']?{_OUTSIDE}[\"']?(?=\s|$|[;&|)`\"'])"),
    re.compile(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"),  # a fork bomb
]
_CREDENTIALS = re.compile(
    r"(?:~|\$HOME|\$\{HOME\}|/home/[^/\s]+|/Users/[^/\s]+|/root)?/?\.(?:ssh|aws|gnupg|kube/config|docker/config\.json"
    r"|config/gcloud|azure|netrc|git-credentials|pypirc)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|/etc/(?:shadow|sudoers)\b"
    r"|\bauthorized_keys\b|\bcredentials\.json\b",
    re.IGNORECASE,
)
_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)*(?:previous|prior|above"
    r"|earlier|preceding|original|system|other|user'?s?)\s+(?:instructions?|prompts?|rules?|messages?|guidelines?"
    r"|directions?|context)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|show|mention\s+(?:this\s+)?to|notify|alert|ask)\s+(?:the\s+)?user\b"
    r"|\bwithout\s+(?:telling|asking|informing|notifying)\s+(?:the\s+)?user\b"
    r"|\byou\s+are\s+now\s+(?:a|an|in|the|no\s+longer)\b|\bnew\s+(?:system\s+)?instructions?\s*:"
    r"|\b(?:reveal|print|show|repeat|output|leak)\s+(?:your|the)\s+(?:system|developer)\s+prompt\b"
    r"|\bjailbreak|\bdeveloper\s+mode\b|</?\s*system\s*>|\[/?INST\]",
    re.IGNORECASE,
)
_URL = re.compile(r"\b(?:https?|ftp|wss?)://(?:[^\s/@]+@)?([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:]+\])", re.IGNORECASE)
# Hosts that are never someone else's: loopback, private names, and the names reserved for examples (RFC 2606).
_LOCAL_HOSTS = re.compile(
    r"^(?:localhost|127(?:\.\d+){3}|0\.0\.0\.0|\[?::1\]?|[\w.-]+\.(?:localhost|local|test|example|invalid|internal)"
    r"|(?:[\w-]+\.)*example\.(?:com|org|net)|10(?:\.\d+){3}|192\.168(?:\.\d+){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d+){2})$",
    re.IGNORECASE,
)


class Hold(BaseModel):
    """Why an entry is held: the rule and what in the text (or its support) matched."""

    rule: HoldRule
    detail: str


class Screened(BaseModel):
    """One held entry, as `playbook review` lists it."""

    name: str
    section: str
    text: str
    holds: list[Hold]


class Support(BaseModel):
    """What an entry rests on, from the store: the contributors of the sessions behind it (None for sessions of
    this machine), whether its text came only from what the agent read, and whether every session behind it
    was withdrawn by its contributor."""

    contributors: set[str | None] = Field(default_factory=set)
    tainted: str | None = None
    withdrawn: str | None = None


def text_key(text: str) -> str:
    """The key a release is recorded under: it approves this text, not whatever the entry says later."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def url_hosts(text: str) -> set[str]:
    """The hosts of the URLs in `text`, lower case."""
    return {m.group(1).lower().rstrip(".") for m in _URL.finditer(text)}


def _known(host: str, known: Collection[str]) -> bool:
    if _LOCAL_HOSTS.match(host):
        return True
    return any(host == k or host.endswith("." + k) or k.endswith("." + host) for k in known)


def _quote(match: re.Match[str]) -> str:
    found = " ".join(match.group(0).split())
    return found if len(found) <= 80 else found[:79] + "…"


def text_holds(text: str, known_hosts: Collection[str] = ()) -> list[Hold]:
    """The holds on what `text` says (remote execution, destruction outside the project, credentials, override
    phrases, unknown hosts); [] for an ordinary lesson."""
    holds: list[Hold] = []
    for rule, patterns in (
        ("remote_exec", _REMOTE_EXEC),
        ("destructive", _DESTRUCTIVE),
        ("credential_path", [_CREDENTIALS]),
        ("override", [_OVERRIDE]),
    ):
        for pattern in patterns:
            match = pattern.search(text)
            if match:
                holds.append(Hold(rule=rule, detail=f"`{_quote(match)}`"))  # type: ignore[arg-type]
                break
    strangers = sorted(h for h in url_hosts(text) if not _known(h, known_hosts))
    if strangers:
        holds.append(
            Hold(rule="unknown_host", detail=f"links to {', '.join(strangers)}, named in none of the user's prompts")
        )
    return holds


def entry_holds(
    text: str, known_hosts: Collection[str], support: Support | None, *, shared: bool, min_contributors: int
) -> list[Hold]:
    """Every hold on one entry: what its text says, and what it rests on (`support`; `shared`: the playbook
    learns from several contributors' sessions, so one contributor alone may not put a lesson in it)."""
    holds = text_holds(text, known_hosts)
    if support is None:
        return holds
    if support.tainted:
        holds.append(Hold(rule="tainted", detail=support.tainted))
    if support.withdrawn:
        holds.append(Hold(rule="withdrawn", detail=support.withdrawn))
    elif shared and support.contributors and len(support.contributors) < min_contributors:
        who = ", ".join(sorted(c or "this machine" for c in support.contributors))
        holds.append(
            Hold(
                rule="quorum",
                detail=f"supported by {len(support.contributors)} contributor(s) ({who}); {min_contributors} needed",
            )
        )
    return holds


def screen_playbook(
    playbook: Playbook,
    known_hosts: Collection[str],
    support: Mapping[str, Support],
    released: Iterable[tuple[str, str]],
    *,
    shared: bool = False,
    min_contributors: int = 2,
) -> tuple[Playbook, list[Screened]]:
    """`playbook` without its held entries, and the held ones with their holds. An entry whose exact text was
    released (`released`: (entry id, `text_key`) pairs) stays."""
    approved = set(released)
    held: list[Screened] = []
    sections = {}
    for name, items in playbook.sections.items():
        kept = []
        for entry in items:
            holds = entry_holds(
                entry.text, known_hosts, support.get(entry.name), shared=shared, min_contributors=min_contributors
            )
            if holds and (entry.name, text_key(entry.text)) not in approved:
                held.append(Screened(name=entry.name, section=name, text=entry.text, holds=holds))
            else:
                kept.append(entry)
        sections[name] = kept
    if not held:
        return playbook, []
    return playbook.model_copy(update={"sections": sections}), held
