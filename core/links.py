"""Links and the hosts they lead to, read as a browser reads them.

A host is what a standard parser (`urllib.parse`) finds after a browser's own normalisation: a backslash is a
slash in a web URL (so `https://evil.net\\@example.com` leads to evil.net, not example.com), userinfo before `@`
and a fragment or query after `#`/`?` are not the host (`https://evil.net#@example.com/` leads to evil.net), a
percent-encoded host is decoded, and an internationalised name is compared in its IDNA (punycode) form, so
`ехample.com` in Cyrillic letters is not `example.com`. A host whose labels mix scripts is unreadable on purpose
and named as such. Pure functions: text in, hosts out.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Iterator
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import idna
import re2

from core.patterns import AnyOf

__all__ = [
    "HOST_PATTERNS",
    "Link",
    "bare_hosts",
    "canonical_host",
    "defanged",
    "find_links",
    "is_local",
    "vouch_key",
    "vouched_host",
    "without_documents",
]

# A scheme URL, `www.` name, or a bare `name.tld/path` (what `curl get.evil.sh/i` fetches): candidates, decided by
# the parser below. RE2: linear in the text, whatever it holds.
_URL_CHARS = r"[^\s<>\"'`(){}|]"
_LABEL_CHAR = r"[^\s<>\"'`(){}|/\\.:@?#\[\]=,;*!$&+%~^]"
_CANDIDATE = re2.compile(
    rf"(?i)(?:(?:https?|ftps?|wss?|file):[/\\]{{1,3}}|[a-z][a-z0-9+.\-]*://|//|www\.){_URL_CHARS}+"
    rf"|(?:{_LABEL_CHAR}+\.)+[a-z\x{{80}}-\x{{10FFFF}}]{_LABEL_CHAR}*(?::\d+)?/{_URL_CHARS}*"
)
# Where a markdown link or image points (`[docs](evil.sh)`), and an e-mail address: a host either way.
_MARKDOWN_TARGET = re2.compile(r"\]\(\s*<?([^\s()<>]+)")
_EMAIL = re2.compile(r"[A-Za-z0-9._%+-]+@((?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,63})\b")
# An IPv6 address in brackets (`[::ffff:c0a8:101]:8080/x`): how a URL writes one, only ever a host.
_IPV6 = re2.compile(r"(?i)\[([0-9a-f]*:[0-9a-f:.]*:[0-9a-f.]*)\]")
# `.local` (mDNS) and `.internal` (a cloud's metadata service, a company's network) are other machines' names.
_RESERVED_SUFFIXES = (".localhost", ".test", ".example", ".invalid")
_RESERVED_NAMES = {"localhost", "example.com", "example.org", "example.net"}


# Object stores' addresses (`s3://bucket/key`, `gs://bucket`): a bucket is no web host, reached only through the
# cloud program whose account holds it, which the program rules judge (an unvouched `aws` is held as a program).
_BUCKET_SCHEMES = ("s3://", "s3a://", "s3n://", "gs://", "r2://", "az://", "abfs://", "abfss://", "wasbs://", "oss://")


class Link:
    """One link in a text: what was written, the host it leads to (None when there is no readable one) and what is
    wrong with it (no readable host, or a host disguised: then it is refused whatever the host)."""

    __slots__ = ("host", "problem", "written")

    def __init__(self, written: str, host: str | None, problem: str | None = None) -> None:
        self.written = written
        self.host = host
        self.problem = problem

    def __repr__(self) -> str:
        return f"Link({self.written!r}, host={self.host!r}, problem={self.problem!r})"


def _whatwg_ipv4(host: str) -> str | None:
    """A host a browser reads as an IPv4 address though Python does not (`127.1`, `0x7f.1`, `2130706433`,
    `0177.0.0.1`), as a dotted quad; None for anything else."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(parts):
        return None
    numbers = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                numbers.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part, 8))
            else:
                numbers.append(int(part, 10))
        except ValueError:
            return None
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = sum(n << (8 * (3 - i)) for i, n in enumerate(head)) + last
    return str(ipaddress.IPv4Address(value))


def canonical_host(host: str) -> tuple[str | None, str | None]:
    """(the host in lower-case ASCII/punycode form, None) or (None, why it cannot be read)."""
    host = unquote(host).strip().rstrip(".").lower().removeprefix("[").removesuffix("]")
    if not host:
        return None, "an empty host"
    try:
        return str(ipaddress.ip_address(host)), None
    except ValueError:
        pass
    numeric = _whatwg_ipv4(host)
    if numeric is not None:
        return numeric, None
    try:
        return idna.encode(host, uts46=True, std3_rules=False).decode("ascii"), None
    except (idna.IDNAError, UnicodeError, ValueError) as exc:
        return None, f"`{host[:60]}` is not a readable host name ({str(exc)[:60]})"


def _split(written: str) -> tuple[str | None, str | None]:
    text = written
    if text.lower().startswith("www."):
        text = "http://" + text
    elif "://" not in text and ":/" not in text and ":\\" not in text and not text.startswith("//"):
        text = "http://" + text  # a bare `name.tld/path`
    if text.startswith("//"):
        scheme, rest = "http", text[2:]
    else:
        scheme, _, rest = text.partition(":")
        rest = rest.lstrip("/\\")  # a browser reads `https:/x`, `https:\\x` and `https:///x` as `https://x`
    # A browser reads a backslash as a slash in a web URL: `https://evil.net\\@good.com` goes to evil.net.
    rest = rest.replace("\\", "/")
    try:
        parts = urlsplit(f"{scheme or 'http'}://{rest}")
        host = parts.hostname
    except ValueError as exc:
        return None, f"`{written[:60]}` is not a readable URL ({exc})"
    if not host:
        return None, None if scheme.lower() in ("file", "mailto", "data") else f"`{written[:60]}` names no host"
    # Userinfo that reads as a host name (`https://docs.python.org@evil.example/`) is there to be mistaken for one:
    # what a reader takes for the destination is not where the link leads.
    user = parts.username or ""
    if "." in user and parts.password is None:
        real, problem = canonical_host(host)
        return real, problem or f"`{written[:60]}` disguises its host ({real}) as `{user[:40]}`"
    return canonical_host(host)


# A host written without its dots: the label separators IDNA reads as a dot (UTS #46: U+3002, U+FF0E, U+FF61), and
# the "defanged" spellings people use to keep a link from being followed (`evil[.]io`, `evil(dot)io`, `evil dot io`).
_DEFANGED = re2.compile(r"(?i)\s*[\[({]\s*(?:\.|dot)\s*[\])}]\s*|\b\s+dot\s+\b|[\x{3002}\x{ff0e}\x{ff61}]")


# Most texts have no link, and are read no further after one pass (`AnyOf`) says so.
_ANY_DEFANGED = AnyOf(_DEFANGED)


def defanged(text: str) -> str:
    """`text` with every dot written another way made a dot again, so a host spelled to slip past reads as one."""
    if not _ANY_DEFANGED.found_in(text):
        return text
    return _DEFANGED.sub(".", text)


_ANY_LINK = AnyOf(_CANDIDATE, _MARKDOWN_TARGET, _EMAIL, _IPV6)


def _document(target: str) -> bool:
    """Whether a link target with no scheme is one name with a document's extension (`CONTRIBUTING.md`,
    `plan.md#next`): a file beside the page, as the repository's documents link each other."""
    name = target.split("#", 1)[0].split("?", 1)[0]
    return "/" not in name and name.rsplit(".", 1)[-1].lower() in _DOCUMENT_TLDS


def without_documents(text: str) -> str:
    """`text` with each markdown link target that is one document of the repository (`[the plan](plan.md#next)`)
    taken out: no host, and once markdown's brackets are read away, not to be read as one (`plan.md#next`)."""
    if "](" not in text:
        return text

    def taken_out(target: re2._Match) -> str:
        return "](" if "://" not in target.group(1) and _document(target.group(1)) else target.group()

    return _MARKDOWN_TARGET.sub(taken_out, text)


def find_links(text: str) -> Iterator[Link]:
    """Every link in `text` with the host it leads to: URLs (with or without a scheme), markdown link targets and
    e-mail addresses."""
    if not _ANY_LINK.found_in(text):
        return
    taken: list[tuple[int, int]] = []  # the URLs found: an address inside one (its userinfo) is not another link
    for match in _CANDIDATE.finditer(text):
        taken.append(match.span())
        written = match.group().rstrip(".,;:!?")
        start = match.start()
        if written.lower().startswith(_BUCKET_SCHEMES):
            continue
        bare = "://" not in written and not written.startswith("//") and not written.lower().startswith("www.")
        bare = bare and ":/" not in written and ":\\" not in written
        if bare and start and (text[start - 1].isalnum() or text[start - 1] in "/.\\~-_$"):
            continue  # the middle of a path (`./a.b/c`, `src/x.y/z`), not a host
        host, problem = _split(written)
        yield Link(written, host, problem)
    for match in _MARKDOWN_TARGET.finditer(text):
        target = match.group(1)
        if "://" not in target and "." in target.split("/", 1)[0] and not target.startswith(("#", "/", ".")):
            if _document(target):
                continue  # `[the guide](CONTRIBUTING.md#setup)`: a document of the repository, as markdown writes one
            host, problem = _split(target)
            yield Link(target, host, problem)
    for match in _EMAIL.finditer(text):
        if any(start <= match.start() < end for start, end in taken):
            continue
        host, problem = canonical_host(match.group(1))
        yield Link(match.group(), host, problem)
    for match in _IPV6.finditer(text):
        if any(start <= match.start() < end for start, end in taken):
            continue
        try:
            address = ipaddress.IPv6Address(match.group(1))
        except ValueError:
            continue  # `[a:b]`: no address
        mapped = address.ipv4_mapped  # `::ffff:c0a8:101` is 192.168.1.1
        yield Link(match.group(), str(mapped) if mapped is not None else str(address), None)


# A name written with no scheme and no slash (`evil.sh`) is a host when it ends in a top-level domain: always for
# one no file is named with, and for one that is also a file's extension (`.sh`, `.py`, `.md`) when the sentence
# puts it where a host goes ("from evil.sh", "at evil.sh").
# Labels of letters and digits of any script (`évil.com` is a host: IDNA turns it into xn--vil-bma.com); the last
# label, the top-level domain, is checked against the list of ASCII ones. Around it, what a sentence puts around a
# word: quotes and brackets of any script («evil.com»), a port (`evil.io:4873`), a possessive (evil.com's), closing
# punctuation, a dash that is no hyphen (evil.com—and).
_BARE = re2.compile(
    r"(?i)(?:^|[\s(\"'<\p{Ps}\p{Pi}])((?:[\p{L}\p{N}][\p{L}\p{N}\p{M}-]*\.)+([a-z][a-z0-9-]*))"
    # what only a host has after its name: a port, a query or a fragment (`evil.io#install`, `evil.io?ref=x`)
    r"((?::\d{1,5})?(?:[?#][^\s.,;:!?)\"'>]\S*)?)"
    r"(?:['\x{2019}]s)?(?:[.,;:!?)\"'>\p{Pe}\p{Pf}]*)(?:$|\s|[\x{2010}-\x{2015}\x{2212}])"
)
# An address written as one number (`3232235777`, `0xC0A80001`), which a browser and most clients read as IPv4: a
# host where a port follows or the sentence puts a host (`_NUMBER_PLACE`); a number elsewhere is a number.
# An address written as dotted numbers a browser reads as IPv4 though they are no decimal quad: octal or hex parts
# (`0300.0250.0001.0001`, `0xC0.0xA8.1.1`), or four parts; a host where a path or a port follows or the sentence puts
# a host. (A version, `3.11/3.12`, has neither.)
_DOTTED = re2.compile(
    r"(?i)(?:^|[\s(\"'<@=])((?:0x[0-9a-f]+|\d+)(?:\.(?:0x[0-9a-f]+|\d+)){1,3})(:\d{1,5})?(/|[\s)\"'>,;!?]|\.(?:\s|$)|$)"
)
_NUMERIC = re2.compile(r"(?i)(?:^|[\s(\"'<@=])(0x[0-9a-f]{1,8}|\d{8,10})(:\d{1,5})?(?:[/\s)\"'>,;.!?]|$)")
# What a number counts after it ("to 104857600 bytes"): no address.
_UNIT = re2.compile(
    r"(?i)^\s*(?:[kmgt]i?b|bytes?|ms|seconds?|rows?|records?|items?|users?|requests?|tokens?|char\w*|lines?"
    r"|times?|entries|events|messages|%)\b"
)
_NUMBER_PLACE = re2.compile(
    r"(?i)\b(?:server|host|hosts|proxy|upstream|dns|endpoint|address|ip|mirror|registry|remote|url|webhook|connect\w*"
    r"|send|sends|point|forward|resolve|ping|curl|wget|ssh|port)\b[^.;!?]{0,30}$"
)
# A name under a top-level domain that is also a file's extension is a file in a sentence that speaks of files
# (`_FILE_WORDS`), or when written as a repository's documents are (`README.md`, `CHANGELOG.md`); elsewhere a host.
_FILE_WORDS = re2.compile(
    r"(?i)\b(?:files?|scripts?|modules?|folders?|director(?:y|ies)|paths?|entry\s+point|config\w*|sources?|edit\w*"
    r"|renam\w*|mov(?:e|es|ed|ing)|import\w*|run|runs|running|execut\w*|creat\w*|delet\w*|commit\w*|updat\w*"
    r"|modif\w*|generat\w*|produc\w*|builds?|lives?\s+in|named?|called)\b"
)
_MOVED_TO = re2.compile(r"(?i)\b(?:renam\w*|mov(?:e|es|ed|ing)|cop(?:y|ies|ied|ying))\b[^;!?\n]{0,60}\bto\s*$")
# An address written alone (`203.0.113.9`, `10.0.0.8:8080`): a host like any other.
_IPV4 = re2.compile(
    r"(?:^|[\s(\"'<@=])((?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})(?:[:/\s)\"'>,;.!?]|$)"
)
_FILE_TLDS = frozenset("ac am app cc in java map md mk ml mm mov pid pl pm ps py rs sh so sv tf zip".split())
# Of those, the one every agent session names its documents with (`research.md`, `plan.md`, `CLAUDE.md`), where a
# host is rare in coding work: a file of the project wherever no place word puts a host. (`.sh`, `.py`, `.rs` name
# hosts developers visit, `bun.sh`, `docs.rs`: those stay hosts in a sentence that speaks of no file.)
_DOCUMENT_TLDS = frozenset({"md"})
_PLACE = re2.compile(
    r"(?i)\b(?:from|at|to|via|on|visit|fetch|download|curl|wget|host|site|server|domain|url|address|mirror|link)"
    r"(?:\s+(?:the|a|an|this|our|their))?\s*$"
)


_ANY_BARE = AnyOf(_IPV4, _BARE, _NUMERIC, _DOTTED)
# Every pattern `find_links`, `bare_hosts` and `defanged` look for: in a text none of them matches, they find no
# link and no host, and change nothing (for a caller's own one pass over what it reads).
HOST_PATTERNS = tuple(
    p.pattern for p in (_CANDIDATE, _MARKDOWN_TARGET, _EMAIL, _IPV6, _DEFANGED, _IPV4, _BARE, _NUMERIC, _DOTTED)
)


@cache
def _tlds() -> frozenset[str]:
    text = (Path(__file__).parent / "tlds.txt").read_text(encoding="ascii")
    return frozenset(line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def bare_hosts(text: str, *, code: bool = False) -> Iterator[Link]:
    """The names in a sentence that are hosts though written without a scheme (`evil.com`, "from evil.sh", an IPv4
    address). In `code` (a code span: `python cli.py`), a name under a domain that is also a file's extension is
    a file unless only a host would be written so (`_host_not_file`)."""
    if not _ANY_BARE.found_in(text):
        return
    for match in _IPV4.finditer(text):
        yield Link(match.group(1), match.group(1), None)
    for match in _DOTTED.finditer(text):
        number, port, after_it = match.group(1), match.group(2), match.group(3)
        parts = number.lower().split(".")
        spelled = any(p.startswith("0x") or (len(p) > 1 and p.startswith("0")) for p in parts)
        if _IPV4.fullmatch(number) or not (spelled or len(parts) == 4):
            continue
        address = _whatwg_ipv4(number)
        if address is None or address.startswith("0."):
            continue
        placed = _NUMBER_PLACE.search(text[: match.start(1)][-50:]) or _PLACE.search(text[: match.start(1)][-50:])
        if port or after_it == "/" or placed:
            yield Link(number, address, None)
    for match in _NUMERIC.finditer(text):
        number, port = match.group(1), match.group(2)
        address = _whatwg_ipv4(number)
        if address is None or address.startswith("0."):  # below 16777216: a count, a size, not an address
            continue
        before, after = text[: match.start(1)][-50:], text[match.end(1) :][:20]
        placed = _NUMBER_PLACE.search(before) or (_PLACE.search(before) and not _UNIT.match(after))
        if port or placed:
            yield Link(number, address, None)
    files: list[bool] = []  # whether the text speaks of files, read once, at the first name that asks
    for match in _BARE.finditer(text):
        name, tld = match.group(1), match.group(2).lower()
        if tld not in _tlds():
            continue
        if tld in _FILE_TLDS and not _host_not_file(text, match.start(1), name, bool(match.group(3)), code, files):
            continue
        host, problem = canonical_host(name)
        yield Link(name, host, problem)


def _host_not_file(text: str, start: int, name: str, tail: bool, code: bool, files: list[bool]) -> bool:
    """Whether `name` (at `start` in `text`), under a top-level domain that is also a file's extension, is a host:
    written with what only a host has (`tail`: a port, query or fragment), with three labels or more or one in
    punycode (`api.evil.app`, `xn--80ak6aa92e.sh`), put where a host goes ("from evil.sh", but not "rename a.sh to
    b.sh"), or, under a domain that is no document's extension (`setup.app`, not `research.md`), in a
    sentence (not `code`) that speaks of no file and not written as a repository's documents are (`README.app`).
    `files`: whether `text` speaks of files, once read (empty until then)."""
    labels = name.split(".")
    if tail or len(labels) > 2 or any(label.lower().startswith("xn--") for label in labels):
        return True
    before = text[:start]
    if _PLACE.search(before[-40:]):
        return not _MOVED_TO.search(before[-80:])
    if code or labels[-1].lower() in _DOCUMENT_TLDS:
        return False
    stem = labels[0]
    if not files:
        files.append(_FILE_WORDS.search(text) is not None)
    return not (files[0] or (stem.isupper() and any(c.isalpha() for c in stem)))


def is_local(host: str) -> bool:
    """True for hosts that are never someone else's: this machine (loopback) and the names reserved for examples
    and local use (RFC 2606, RFC 6761). A private address is someone's machine on some network: not local."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return (
            host in _RESERVED_NAMES
            or host.endswith(_RESERVED_SUFFIXES)
            or host.endswith(tuple("." + n for n in _RESERVED_NAMES))
        )
    return address.is_loopback or address.is_unspecified


# Hosts where anyone may own a namespace: what a user vouches for there is an owner's, not the host's (a prompt that
# links github.com/acme/app vouches acme's repositories, not a stranger's `github.com/evil/tools`). Each with the
# namespace it shares and how many path segments come before the owner (`api.github.com/repos/<owner>`).
_SHARED_HOSTS: dict[str, tuple[str, int]] = {
    "github.com": ("github.com", 0),
    "raw.githubusercontent.com": ("github.com", 0),
    "codeload.github.com": ("github.com", 0),
    "api.github.com": ("github.com", 1),
    "gist.github.com": ("gist.github.com", 0),
    "gist.githubusercontent.com": ("gist.github.com", 0),
    "gitlab.com": ("gitlab.com", 0),
    "bitbucket.org": ("bitbucket.org", 0),
    "codeberg.org": ("codeberg.org", 0),
    "gitee.com": ("gitee.com", 0),
}
_SCHEME = re2.compile(r"(?i)^[a-z][a-z0-9+.-]*:")


def vouch_key(link: Link) -> str | None:
    """What a link vouches for when a user's prompt holds it: its host, or on a shared host its owner's namespace
    (`github.com/acme`); None when it names no host, or a shared host's owner is not in it."""
    if link.host is None:
        return None
    shared = _SHARED_HOSTS.get(link.host.removeprefix("www."))
    if shared is None:
        return link.host
    written = _SCHEME.sub("", link.written).lstrip("/")
    path = urlsplit("//" + written).path
    segments = [unquote(s) for s in path.split("/") if s]
    root, skip = shared
    owner = segments[skip].lower() if len(segments) > skip else ""
    return f"{root}/{owner}" if owner and owner not in (".", "..") else None


def vouched_host(link: Link, vouched: Collection[str]) -> bool:
    """True when the link's host is local, or is (or is under) a host the user named (`docs.python.org` is under
    `python.org`; `python.org.evil.net` is not); on a shared host (`github.com`), when the user named its owner."""
    host = link.host or ""
    if is_local(host):
        return True
    if host.removeprefix("www.") in _SHARED_HOSTS:
        return vouch_key(link) in vouched
    return any(host == v or host.endswith("." + v) for v in vouched)
