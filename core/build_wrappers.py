"""Gradle's and Maven's wrappers (`./gradlew`, `./mvnw`): where their properties say to download the build tool from.

A wrapper downloads the distribution its properties name and runs it, so a project pointing `distributionUrl` at its
own host runs whatever that host serves for every `./gradlew` or `./mvnw` task. The official hosts, over https, are
admitted; any other host, a key this reader does not know, or a file it cannot read holds every task of the wrapper.
Gradle's own settings hold every `gradle` and `./gradlew` command when they load code into its JVM (gradle.properties'
`org.gradle.jvmargs`, a system property) or fetch over plain http (a build script's `allowInsecureProtocol`).
"""

from __future__ import annotations

import re2

from core.recipes import Recipe, unread

__all__ = [
    "gradle_properties_recipes",
    "gradle_script_recipes",
    "gradle_wrapper_recipes",
    "maven_config_recipes",
    "maven_extensions_recipes",
    "maven_jvm_config_recipes",
    "maven_pom_recipes",
    "maven_wrapper_recipes",
    "sbt_options_recipes",
]

_GRADLE_HOSTS = frozenset({"services.gradle.org"})
_MAVEN_HOSTS = frozenset({"repo.maven.apache.org", "repo1.maven.org"})
_GRADLE_KEYS = frozenset(
    "distributionBase distributionPath zipStoreBase zipStorePath networkTimeout validateDistributionUrl"
    " distributionSha256Sum distributionUrl".split()
)
_MAVEN_KEYS = frozenset(
    "distributionUrl wrapperUrl distributionSha256Sum wrapperSha256Sum distributionType wrapperVersion"
    " alwaysDownload alwaysUnpack".split()
)
_URL = re2.compile(r"^https://([A-Za-z0-9.-]+)(?::443)?/[^\s]*$")


def gradle_wrapper_recipes(text: str) -> list[Recipe]:
    """gradle/wrapper/gradle-wrapper.properties: held unless `distributionUrl` is on services.gradle.org."""
    return _wrapper("gradlew", text, _GRADLE_KEYS, _GRADLE_HOSTS, ("distributionUrl",))


def maven_wrapper_recipes(text: str) -> list[Recipe]:
    """.mvn/wrapper/maven-wrapper.properties: held unless its URLs are on Maven Central."""
    return _wrapper("mvnw", text, _MAVEN_KEYS, _MAVEN_HOSTS, ("distributionUrl", "wrapperUrl"))


def _wrapper(
    runner: str, text: str, keys: frozenset[str], hosts: frozenset[str], urls: tuple[str, ...]
) -> list[Recipe]:
    properties = _properties(text)
    found = [unread(runner, f"its wrapper's properties set `{k[:40]}`") for k in properties if k not in keys]
    for key in urls:
        url = properties.get(key)
        if url is None:
            continue
        match = _URL.match(url)
        if match is None or match.group(1).lower() not in hosts:
            where = match.group(1) if match else url[:40]
            found.append(unread(runner, f"the wrapper downloads from `{where}` and runs it (`{key}`)"))
    return found


def _properties(text: str) -> dict[str, str]:
    """A Java properties file's keys and values: `key=value`, `key: value` or `key value`, `#` and `!` comments, a
    line ending in a backslash joined with the next, `\\:` and `\\=` read as themselves."""
    found: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.lstrip()
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        pending = ""
        if not line or line[0] in "#!":
            continue
        match = _PROPERTY.match(line)
        if match is None:
            found[line[:40]] = ""
            continue
        found[_unescape(match.group(1))] = _unescape(match.group(2))
    return found


_PROPERTY = re2.compile(r"^((?:\\.|[^\\:=\s])+)\s*[:=\s]\s*(.*)$")


def _unescape(text: str) -> str:
    """A property's text with its escapes read (`https\\://x` is `https://x`); a `\\u` escape is kept as written, and
    a URL carrying it matches no host."""
    out: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(char, char if char != "u" else "\\u"))
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)


# Maven's options that only say how it reports, how many threads it builds with, or when it stops; any other
# option in `.mvn/maven.config` (`-s` another settings file, `-D` a property such as `skipTests`, `-P` a profile)
# changes what every build fetches, runs or checks.
_MAVEN_OPTION = re2.compile(
    r"^(?:-B|--batch-mode|-ntp|--no-transfer-progress|-q|--quiet|-e|--errors|-X|--debug|-V|--show-version|-fae"
    r"|--fail-at-end|-ff|--fail-fast|-nsu|--no-snapshot-updates|-T\d+(?:\.\d+)?C?|--threads=\d+(?:\.\d+)?C?"
    r"|-Dstyle\.color=(?:always|never|auto))$"
)
# The JVM's options that size or tune it (memory, a collector, a code cache, an encoding); `-javaagent`, `-XX:OnError`
# and the rest load or run something.
_JVM_OPTION = re2.compile(
    r"^(?:-Xm[sx]\d+[kKmMgG]?|-Xss\d+[kKmMgG]?|-XX:(?:MaxMetaspaceSize|ReservedCodeCacheSize)=\d+[kKmMgG]?"
    r"|-XX:[+-](?:UseG1GC|UseParallelGC|UseSerialGC|TieredCompilation|UseStringDeduplication|HeapDumpOnOutOfMemoryError)|-XX:TieredStopAtLevel=\d"
    r"|-Dfile\.encoding=[A-Za-z0-9_-]+|-Djava\.awt\.headless=(?:true|false)"
    r"|--add-(?:opens|exports)(?:=|\s+)[A-Za-z0-9_.]+/[A-Za-z0-9_.]+=(?:ALL-UNNAMED|[A-Za-z0-9_.]+))$"
)


def maven_config_recipes(text: str) -> list[Recipe]:
    """.mvn/maven.config: options Maven adds to every build, its own (`./mvnw`) and a `mvn` run there; only those
    that say how it reports or how many threads it uses are admitted."""
    return _options(text, _MAVEN_OPTION, ".mvn/maven.config", "adds `{}` to every build")


def maven_jvm_config_recipes(text: str) -> list[Recipe]:
    """.mvn/jvm.config: options of the JVM that runs Maven; only those that size or tune it are admitted."""
    return _options(text, _JVM_OPTION, ".mvn/jvm.config", "starts Maven's JVM with `{}`")


def _options(text: str, admitted: re2._Regexp, file: str, says: str) -> list[Recipe]:
    # `--add-opens java.base/x=ALL-UNNAMED`: the value is the next word; joined so the whole option is judged.
    words = text.split()
    joined: list[str] = []
    for word in words:
        if joined and joined[-1] in ("--add-opens", "--add-exports"):
            joined[-1] += f" {word}"
        else:
            joined.append(word)
    held = [w for w in joined if not admitted.match(w)][:8]
    return [unread(runner, f"{file} {says.format(w[:40])}") for w in held for runner in ("mvnw", "mvn")]


_EXTENSION = re2.compile(r"<extension[\s>]")
_REPOSITORIES = re2.compile(r"(?s)<(?:pluginRepositories|repositories)\b.*?</(?:pluginRepositories|repositories)>")
_REPOSITORY_URL = re2.compile(r"<url>\s*([^<\s]*)\s*</url>")


def maven_extensions_recipes(text: str) -> list[Recipe]:
    """.mvn/extensions.xml: core extensions Maven loads into every build before it reads the project (round 8b);
    any holds every `mvn` and `./mvnw` build."""
    if not _EXTENSION.search(text):
        return []
    why = ".mvn/extensions.xml loads an extension into every build"
    return [unread(runner, why) for runner in ("mvnw", "mvn")]


def maven_pom_recipes(text: str) -> list[Recipe]:
    """pom.xml's `<repositories>` and `<pluginRepositories>`: a repository other than Maven Central, over https,
    holds every build (what it fetches, plugins and their code included, comes from that host; round 8b)."""
    found: list[Recipe] = []
    for section in _REPOSITORIES.findall(text)[:16]:
        for url in _REPOSITORY_URL.findall(section)[:16]:
            match = _URL.match(url)
            if match is None or match.group(1).lower() not in _MAVEN_HOSTS:
                where = match.group(1) if match else url[:40]
                found += [unread(runner, f"pom.xml fetches from `{where}`") for runner in ("mvnw", "mvn")]
    return found


# gradle.properties' keys Gradle reads for itself that say how it caches, parallelises, reports or warns; the
# project's own properties (`kotlin.code.style`, `android.useAndroidX`, `version`) are its build scripts' to read.
_GRADLE_ADMITTED = frozenset(
    "org.gradle.caching org.gradle.caching.debug org.gradle.configureondemand org.gradle.console org.gradle.daemon"
    " org.gradle.daemon.idletimeout org.gradle.debug org.gradle.logging.level org.gradle.logging.stacktrace"
    " org.gradle.parallel org.gradle.priority org.gradle.vfs.verbose org.gradle.vfs.watch org.gradle.warning.mode"
    " org.gradle.welcome org.gradle.workers.max org.gradle.configuration-cache org.gradle.configuration-cache.problems"
    " org.gradle.unsafe.configuration-cache org.gradle.unsafe.configuration-cache-problems"
    " org.gradle.kotlin.dsl.allWarningsAsErrors"
    " org.gradle.dependency.verification".split()
)


def gradle_properties_recipes(text: str) -> list[Recipe]:
    """gradle.properties: `org.gradle.jvmargs` beyond the JVM's sizing and tuning (`-javaagent:`, a trust store), a
    system property (`systemProp.javax.net.ssl.trustStore`, a proxy), and any other `org.gradle.` key not known to
    only tune or report (`org.gradle.java.home`, an init script's) hold every `gradle` and `./gradlew` command."""
    found: list[Recipe] = []
    for key, value in _properties(text).items():
        if key == "org.gradle.jvmargs":
            found += [
                _gradle_held(f"starts Gradle's JVM with `{w[:40]}`") for w in value.split() if not _JVM_OPTION.match(w)
            ]
        elif key == "org.gradle.dependency.verification" and value.strip() != "strict":
            found.append(_gradle_held(f"sets dependency verification to `{value[:20]}`"))
        elif key.startswith("systemProp.") or (key.startswith("org.gradle.") and key not in _GRADLE_ADMITTED):
            found.append(_gradle_held(f"sets `{key[:40]}`"))
    return found[:8]


def _gradle_held(what: str) -> Recipe:
    return unread("gradle", f"gradle.properties {what}")


_BLOCK_COMMENT = re2.compile(r"(?s)/\*.*?\*/")
_GRADLE_INSECURE = re2.compile(r"(?i)allowInsecureProtocol|[\"']http://")
# A build included from outside the project, or a script applied from a URL: code the project does not hold.
_GRADLE_ELSEWHERE = re2.compile(
    r"""\b(?:includeBuild|includeFlat)\b\s*\(?\s*(?:file\s*\(\s*)?["'](?:\.\./|/|~)"""
    r"""|\bapply\b\s*\(?\s*from\s*(?::|=)\s*(?:uri\s*\(\s*)?["'][A-Za-z][A-Za-z0-9+.-]*:"""
    r"""|\bincludeFlat\b"""
)


def gradle_script_recipes(text: str) -> list[Recipe]:
    """settings.gradle(.kts) and build.gradle(.kts): a repository over plain http, insecure protocols allowed, a build
    included from outside the project or a script applied from a URL holds every `gradle` and `./gradlew` command
    (what it fetches, plugins included, is built and run)."""
    code = "\n".join(line for line in _BLOCK_COMMENT.sub("", text).splitlines() if not line.lstrip().startswith("//"))
    found: list[Recipe] = []
    if (match := _GRADLE_INSECURE.search(code)) is not None:
        found.append(
            unread("gradle", f"the Gradle build fetches over plain http (`{match.group(0).strip(chr(34) + chr(39))}`)")
        )
    if (match := _GRADLE_ELSEWHERE.search(code)) is not None:
        found.append(
            unread("gradle", f"the Gradle build takes code from outside the project (`{match.group(0)[:40]}`)")
        )
    return found


# sbt's launcher options that size its JVM (`-J-Xmx2g`) or say how it reports; any other (`-Dsbt.repository.config`,
# `-J-javaagent:`, `-sbt-jar`) changes what it fetches or runs.
_SBT_OPTION = re2.compile(r"^(?:-batch|--batch|-no-colors|--no-colors|-v|--verbose|-debug|--debug|-client|--client)$")


def sbt_options_recipes(text: str) -> list[Recipe]:
    """`.jvmopts` and `.sbtopts`: options sbt's launcher starts its JVM with for every `sbt` command; only those that
    size or tune the JVM (written `-J-Xmx2g` in `.sbtopts`) or say how sbt reports are admitted."""
    held = [
        w
        for w in text.split()
        if not w.startswith("#") and not _JVM_OPTION.match(w.removeprefix("-J")) and not _SBT_OPTION.match(w)
    ][:8]
    return [unread("sbt", f"sbt's launcher options add `{w[:40]}`") for w in held]
