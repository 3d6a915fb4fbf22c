"""Passwords given to commands on their command line.

As an option's value (`--password PW`, `mysql -pPW`, `curl -u user:PW`), as a positional argument (`rabbitmqctl
add_user USER PW`), or echoed into a pipe or a here-string a command reads its password from (`echo PW | sudo -S`).
"""

from __future__ import annotations

from core.patterns import SPACE, Match, Pattern
from core.secret_rule import Rule, Span, a_value, not_a_marker, not_placeholder, placeholder

__all__ = ["ARGUMENT_RULES"]

_S, _NS = f"[{SPACE}]", f"[^{SPACE}]"  # Python's whitespace as a class, and any other character (RE2's `\s` is ASCII)


def _arg(bare: str) -> str:
    """A command-line argument: its inside when quoted (`q`, `a`), else a bare word of `bare` characters (`v`)."""
    # a quote escaped as JSON writes it (`\\"`) is a quote: a tool call's input is stored as JSON text
    return f"(?:\\\\?\"(?P<q>[^\"\\n]+?)\\\\?\"|'(?P<a>[^'\\n]+)'|(?P<v>{bare}))"


_BARE = f"[^{SPACE}\"'-][^{SPACE}\"']*"  # a bare argument: no quote, not a flag
# A bare argument that is no flag and none of the shell's operators (`&&`, `|`, `;`, `>`): a password given where an
# argument may end the command (`rabbitmqctl add_user bob && ...` takes no password on the line).
_CMD_BARE = r"[^\s\"'|;&<>-][^\s\"'|;&<>]*"


def _openssl_pass(m: Match, span: Span) -> Span | None:
    # `-passin env:VAR`, `file:path`, `fd:3`, `stdin` name where the password is, not the password
    if m.string.startswith(("env:", "file:", "fd:", "stdin"), span[0]):
        return None
    return not_placeholder(m, span)


def _echoed(m: Match, span: Span) -> Span | None:
    # `echo -n 'pw' | sudo -S ...`, `printf '%s\n' pw | ...`: what is echoed, unless it only names the password
    words = m.string[span[0] : span[1]].split()
    while words and words[0].startswith("-"):
        words.pop(0)
    if words and m.string[m.start() : m.start() + 6] == "printf" and "%" in words[0]:
        words.pop(0)
    said = " ".join(words).strip("\"'")
    if not said or said == "-" or placeholder(said, 0):
        return None
    return span


def _htpasswd(m: Match, span: Span) -> Span | None:
    # `htpasswd -b FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD`: only batch mode (`b`) takes it on the line.
    flags = (m.group("flags") or "").replace(" ", "").replace("\t", "")
    letters = "".join(c for c in flags if c.isalpha())
    if "b" not in letters:
        return None
    group = "second" if "n" in letters else "third"
    if m.start(group) < 0 or placeholder(m.string, m.start(group)):
        return None
    start, end = m.span(group)
    return start, end - 2 if m.string.endswith("&&", start, end) else end  # `... PW&& next`: the `&&` is the shell's


ARGUMENT_RULES: list[Rule] = [
    Rule(
        "password_flag",
        Pattern(
            rf"--(?:password|passwd|passphrase|pass|token|api-key|secret|auth-token)(?:=|{_S}+)"
            + _arg(f"[^{SPACE}\"'-]{_NS}*")
        ),
        "[REDACTED:password]",
        ("--pass", "--token", "--api-key", "--secret", "--auth-token"),
        ignore_case=True,
        check=not_placeholder,
    ),
    # `-passin pass:PW` (openssl), `-storepass PW` (keytool), `-password PW`: single-dash password options.
    Rule(
        "pass_option",
        Pattern(
            rf"(?:^|[{SPACE}\"'])-(?:pass|passin|passout|password|passwd|passphrase|(?:src|dest)?(?:store|key)pass)"
            rf"(?:={_S}*|{_S}+)(?:pass:)?" + _arg(_BARE)
        ),
        "[REDACTED:password]",
        ("pass",),
        ignore_case=True,
        check=_openssl_pass,
    ),
    # `openssl enc -k PW` / `-K HEXKEY`
    Rule(
        "openssl_key",
        Pattern(r"\bopenssl\b[^\n|;&]*?[ \t]-k[ \t]+" + _arg(_BARE)),
        "[REDACTED:password]",
        ("openssl",),
        ignore_case=True,
        check=not_placeholder,
    ),
    # mysql / mariadb take the password glued to `-p`, as 7-Zip and RAR do; elsewhere `-pthread` or `-pedantic` are
    # flags.
    Rule(
        "short_password_flag",
        Pattern(rf"\b(?:mysql|mariadb|7z|7za|7zr|rar|unrar)[^\n]*?{_S}-p" + _arg(f"{_NS}+")),
        "[REDACTED:password]",
        ("mysql", "mariadb", "7z", "rar"),
        ignore_case=True,
        check=not_a_marker,
    ),
    # `zip -P PW`, `unzip -P PW` (upper case: `unzip -p` writes to stdout).
    Rule(
        "zip_password",
        Pattern(r"\b(?:zip|unzip|zipcloak)\b[^\n|;&]*?[ \t]-P[ \t]*" + _arg(_BARE)),
        "[REDACTED:password]",
        ("zip",),
        check=not_placeholder,
    ),
    # `redis-cli -a PW`, `--pass PW` (Redis's and its forks' clients take the password on the command line).
    Rule(
        "redis_password",
        Pattern(r"\b(?:redis|valkey|keydb)-cli\b[^\n|;&]*?[ \t](?:-a|--pass)[ \t]+" + _arg(_BARE)),
        "[REDACTED:password]",
        ("redis-cli", "valkey-cli", "keydb-cli"),
        check=a_value,
    ),
    # Database, directory and broker clients given the password on the command line: `mongosh -p PW`, `ldapsearch
    # -w PW`, `sqlcmd -P PW`, `mosquitto_pub -P PW`, WP-CLI's `--user_pass=PW`, `ipmitool -P PW`, `cqlsh -p PW`,
    # `cypher-shell -p PW`, `rabbitmqadmin -p PW`, `psexec -p PW`.
    Rule(
        "client_password",
        Pattern(
            r"\b(?:mongosh|mongo|mongodump|mongorestore|mongoexport|mongoimport|ldapsearch|ldapadd|ldapmodify"
            r"|ldapdelete|ldapwhoami|ldapcompare|sqlcmd|bcp|mosquitto_pub|mosquitto_sub|wp|ipmitool|cqlsh|cypher-shell"
            r"|rabbitmqadmin|psexec)\b[^\n|;&]*?[ \t]"
            r"(?:-p|-w|-P|--password|--pass|--user_pass|--admin_password|--dbpass)(?:[ \t]+|=)" + _arg(_BARE)
        ),
        "[REDACTED:password]",
        (
            "mongo",
            "ldap",
            "sqlcmd",
            "bcp",
            "mosquitto",
            "wp",
            "ipmitool",
            "cqlsh",
            "cypher-shell",
            "rabbitmqadmin",
            "psexec",
        ),
        check=a_value,
    ),
    # Commands whose documented usage takes the password as a positional argument: `rabbitmqctl add_user USER PW`
    # (`change_password`, `authenticate_user`), `mysqladmin password NEW`, Windows' `net user NAME PW` and
    # `net use \\\\srv\\share PW`, Oracle's `sqlplus USER/PW@DB`, `lftp -u USER,PW`. (`smbpasswd` reads it on stdin:
    # `piped_password`.)
    Rule(
        "rabbitmq_password",
        Pattern(
            r"\brabbitmqctl\b[^\n|;&]*?[ \t](?:add_user|change_password|authenticate_user)(?:[ \t]+--?[a-z-]+)*"
            r"[ \t]+(?:\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'|;&<>-][^\s\"'|;&<>]*)[ \t]+" + _arg(_CMD_BARE)
        ),
        "[REDACTED:password]",
        ("rabbitmqctl",),
        check=a_value,
    ),
    Rule(
        "mysqladmin_password",
        Pattern(r"\b(?:mysqladmin|mariadb-admin)\b[^\n|;&]*?[ \t](?:old-)?password[ \t]+" + _arg(_CMD_BARE)),
        "[REDACTED:password]",
        ("mysqladmin", "mariadb-admin"),
        check=a_value,
    ),
    # `net user NAME PW [/add]`: the password ends the command or an option follows (`net user growth is 5% ...` is
    # prose); `*` asks for it.
    Rule(
        "net_user_password",
        Pattern(
            r"\bnet[ \t]+(?:user[ \t]+(?:\"[^\"\n]+\"|[^\s\"/*][^\s\"]*)|use[ \t]+(?:[a-z]:[ \t]+)?\\{2,4}[^\s\"]+)"
            r"[ \t]+(?:\"(?P<q>[^\"\n]+)\"|(?P<v>[^\s\"'/*|;&<>][^\s\"'|;&<>]*))"
            r"(?:[ \t]+/|[ \t]*(?:\r|\n|\\n|[&|;`\"')]|$))"
        ),
        "[REDACTED:password]",
        ("net ", "net\t"),
        ignore_case=True,
        check=a_value,
    ),
    Rule(
        "sqlplus_password",
        Pattern(
            r"\b(?:sqlplus|sqlldr|expdp|impdp)\b(?:[ \t]+-[a-z]+)*[ \t]+(?:userid=)?[\"']?[a-z0-9_$#.]+/"
            # the password runs to the word's last `@` before the database (a password may hold `@` itself)
            r"(?:(?P<v>[^\s\"'/]+)@[^\s@\"']+|(?P<w>[^\s@\"'/]+))"
        ),
        "[REDACTED:password]",
        ("sqlplus", "sqlldr", "expdp", "impdp"),
        ignore_case=True,
        check=a_value,
    ),
    Rule(
        "lftp_password",
        Pattern(r"\blftp\b[^\n|;&]*?[ \t]-u[ \t]+[\"']?[^\s,\"']+,(?P<v>[^\s\"']+)"),
        "[REDACTED:password]",
        ("lftp",),
        check=a_value,
    ),
    # `nmcli ... password PW` (or `wifi-sec.psk PW`), `wpa_passphrase SSID PW`, `neo4j-admin set-initial-password PW`.
    Rule(
        "positional_passphrase",
        Pattern(
            r"\b(?:nmcli\b[^\n|;&]*?[ \t](?:password|wifi-sec\.psk|802-1x\.password)"
            r"|wpa_passphrase[ \t]+(?:\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'|;&<>-][^\s\"'|;&<>]*)"
            r"|neo4j-admin\b[^\n|;&]*?[ \t]set-initial-password)[ \t]+" + _arg(_CMD_BARE)
        ),
        "[REDACTED:password]",
        ("nmcli", "wpa_passphrase", "neo4j-admin"),
        check=a_value,
    ),
    # FreeRDP's `/p:PW`, `cmdkey /pass:PW`, `schtasks /rp PW` (Windows' slash options, in any case).
    Rule(
        "windows_password_option",
        Pattern(
            r"\b(?:(?:xfreerdp|wlfreerdp|sdl-freerdp)3?\b[^\n|;&]*?[ \t][/-]p:|cmdkey\b[^\n|;&]*?[ \t]/pass:"
            r"|schtasks\b[^\n|;&]*?[ \t]/rp[ \t]+)" + _arg(_CMD_BARE)
        ),
        "[REDACTED:password]",
        ("freerdp", "cmdkey", "schtasks"),
        ignore_case=True,
        check=a_value,
    ),
    Rule(
        "sshpass",
        Pattern(rf"\bsshpass{_S}+(?:-[a-oq-z]{_NS}*{_S}+(?:{_NS}+{_S}+)?)*-p{_S}*" + _arg(f"[^{SPACE}\"']+")),
        "[REDACTED:password]",
        ("sshpass",),
        ignore_case=True,
        check=not_placeholder,
    ),
    Rule(
        "docker_login",
        Pattern(rf"\b(?:docker|podman|registry){_S}+login\b[^\n]*?{_S}-p{_S}*" + _arg(f"[^{SPACE}\"']+")),
        "[REDACTED:password]",
        ("docker", "podman", "registry"),  # not `docker login`: any whitespace may come between
        ignore_case=True,
        check=not_placeholder,
    ),
    # A password fed on standard input by echo: `echo PW | sudo -S`, `| docker login --password-stdin`, `| chpasswd`,
    # `| smbpasswd -s`.
    Rule(
        "piped_password",
        Pattern(
            r"\b(?:echo|printf)[ \t]+(?P<v>[^|\n]*?)[ \t]*\|[ \t]*(?:sudo\b[^|\n]*?[ \t](?:-[A-Za-z]*S|--stdin)"
            r"|[^|\n]*?(?:--password-stdin|--with-token|passwd[ \t]+--stdin)|chpasswd\b"
            r"|smbpasswd\b[^|\n]*?[ \t]-[a-z]*s\b)"
        ),
        "[REDACTED:password]",
        ("echo", "printf"),
        check=_echoed,
    ),
    # `sudo -S ... <<< PW`
    Rule(
        "sudo_herestring",
        Pattern(r"\bsudo\b[^|\n]*?[ \t](?:-[A-Za-z]*S[A-Za-z]*|--stdin)\b[^|\n]*?<<<[ \t]*" + _arg(_BARE)),
        "[REDACTED:password]",
        ("sudo",),
        check=not_placeholder,
    ),
    Rule(
        "htpasswd",
        Pattern(
            r"\b(?:htpasswd|mosquitto_passwd)(?P<flags>(?:[ \t]+-[A-Za-z]+(?:[ \t]+[0-9]+)?)+)"
            r"[ \t]+(?P<first>[^\s|;<>-][^\s|;<>]*)"
            r"[ \t]+(?P<second>[^\s|;<>-][^\s|;<>]*)(?:[ \t]+(?P<third>[^\s|;<>-][^\s|;<>]*))?"
        ),
        "[REDACTED:password]",
        ("htpasswd", "mosquitto_passwd"),
        check=_htpasswd,
    ),
    # `curl -u user:password`, httpie's `-a user:password`, smbclient's `-U user%password`.
    Rule(
        "user_password_flag",
        # (no `[` in the user: `-a [REDACTED:password]` is a value redacted already, not `user:password`)
        Pattern(rf"(?:^|{_S})(?:-u|--user|-a|--auth)(?:{_S}+|=)[\"']?[^{SPACE}:\"'@/\[]+[:%](?P<v>[^{SPACE}\"'@]+)"),
        "[REDACTED:password]",
        ("-u", "-a"),  # in `--user` and `--auth` too; not `-u `: a tab or a newline may follow
        ignore_case=True,
        check=not_placeholder,
    ),
]
