"""Issue 41: secrets said in prose (a one-time-password seed, recovery codes, a PIN, `pw:`, a login and its password)
and passwords a command takes as an argument its manual gives it (`rabbitmqctl add_user USER PW`, `net user NAME PW`,
`nmcli ... password PW`, `cqlsh -p PW`, `gpg --passphrase PW`, ...).

Each shape is redacted wherever it stands, whatever the value; the near misses beside it (an identifier after "MFA",
a version after "pin", a feature named "recovery codes", a command that asks for the password) are kept as written.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.redact import redact
from tests.secret_kinds import NEW_SHAPES, Planted

_ISSUE_41 = NEW_SHAPES[NEW_SHAPES.index(next(p for p in NEW_SHAPES if p.kind == "otp_2fa_secret")) :]


def _leftover(template: str, secret: str, clean: str, width: int = 5) -> list[str]:
    """The pieces of `secret` (every run of `width` characters) that `clean` holds and the text around it does not."""
    around = template.format(s="")
    pieces = {secret[i : i + width] for i in range(max(1, len(secret) - width + 1))}
    return sorted(p for p in pieces if p in clean and p not in around)


@pytest.mark.parametrize("planted", _ISSUE_41, ids=[p.kind for p in _ISSUE_41])
def test_each_shape_of_issue_41_is_redacted_to_the_last_piece(planted: Planted) -> None:
    text, secret = planted.text, planted.secret
    clean, n = redact(text)
    assert n >= 1 and "[REDACTED:" in clean
    template = text.replace(secret, "{s}")
    assert _leftover(template, secret, clean) == [], clean
    assert redact(clean) == (clean, 0)


def test_every_recovery_code_of_a_list_goes() -> None:
    codes = ["4821-9931", "7712-0034", "a1b2c-3d4e5", "90412736"]
    clean, _ = redact(f"recovery codes for staging: {codes[0]}, {codes[1]} and {codes[2]}\n{codes[3]}")
    assert [c for c in codes if c in clean] == []
    clean, _ = redact(f"my backup codes are {codes[0]} {codes[1]} - then log in with v2-style auth")
    assert [c for c in codes[:2] if c in clean] == [] and "v2-style auth" in clean  # the list ends at the words


@pytest.mark.parametrize(
    "text",
    [
        # near misses of the prose shapes
        "the PIN column holds four digits",
        "pin the version to 1.2.3",
        "pin: 1234.5 on the chart",
        "the pin is 2024-11-28 in the lockfile",
        "PIN: 42",  # too short for a PIN
        "pw: see the vault",
        "pw: stored in 1Password",
        "recovery codes feature",
        "the recovery codes are stored in 1Password",
        "backup codes are v2-style now",
        "the backup codes are 10 per user",
        "First copy your one-time code: 8F26-E3AE",  # a device code of `gh auth login`: expired in minutes
        "seed the database with 42 rows",
        "MFA seed HTTPSCONNECTIONPOOL",  # an upper-case name: no base32 digit, too short for a seed
        "the 2FA secret is stored in the vault",
        "the OTP is 482193",  # a one-time code, not its seed
        "otp: enabled",
        "the login for staging is broken and flaky",
        "log in with github and 2fa",
        "sign in with google and pick account",
        "Last login: Sat Nov 28 18:35:01 2026 from 10.0.0.1",
        "- name: Login to GHCR: docker/login-action@v3",
        "creds are in ops/creds-2024.yaml",
        "credentials are admin / admin",  # a word: the rules cannot tell it from prose
        # commands that ask for the password, or name where it is
        "rabbitmqctl add_user bob && rabbitmqctl set_user_tags bob admin",
        "rabbitmqctl add_user bob $RABBIT_PASSWORD",
        "rabbitmqctl change_password app",
        "mysqladmin -u root -p password && echo ok",
        "mysqladmin -u root -p status",
        "net user deploy * /add",
        "the net user growth is 5% this quarter",
        "net user bob /delete",
        "sqlplus / as sysdba",
        "sqlplus -s /nolog @setup.sql",
        "lftp -u deploy ftp.internal",
        "mosquitto_passwd -c /etc/mosquitto/passwd bot",
        "smbpasswd -a deploy",
        "ipmitool -I lanplus -H bmc -U admin -E chassis status",
        "xfreerdp /u:admin /v:win.internal",
        "gpg --batch --passphrase-fd 0 -d secrets.gpg",
        "nmcli --ask dev wifi connect HomeNet",
        "nmcli dev wifi connect HomeNet password $WIFI_PASSWORD",
        "wpa_passphrase HomeNet < passphrase.txt",
    ],
)
def test_a_near_miss_is_kept_as_written(text: str) -> None:
    assert redact(text) == (text, 0)


_WORD = st.from_regex(r"[A-Z][a-z]{3,7}", fullmatch=True)
# a password as people make them: words, digits and a sign, as the attack wrote them ("Falcon-Rain-2291")
_PASSWORD = st.builds(
    lambda a, b, digits, sign: f"{a}{sign}{b}-{digits}",
    _WORD,
    _WORD,
    st.from_regex(r"[0-9]{2,6}", fullmatch=True),
    st.sampled_from(["-", "_", ".", "!", "#", "%", "+", "@"]),
)
_SEED = st.from_regex(r"[A-Z2-7]{15,40}", fullmatch=True).flatmap(
    lambda s: st.sampled_from("234567").map(lambda d: s + d)
)
_PROSE = [
    "the 2FA secret is {s}",
    "authenticator key: {s}",
    "MFA seed {s}",
    "the TOTP seed for staging is {s}.",
]
_PASSWORDS = [
    "no, use `make login`, pw: {s}",
    "pw is {s}",
    "the login for staging is admin and {s}",
    "creds are admin:{s}",
    "log in as deploy / {s}",
    "credentials: ci-bot, {s}",
    "my API key: {s}",
    "rabbitmqctl add_user app {s}",
    "sudo rabbitmqctl -n rabbit@mq authenticate_user app '{s}'",
    "mysqladmin -u root password {s}",
    "NET USER deploy {s} /ADD",
    "net user deploy {s}",
    "sqlplus app/{s}@orcl",
    "lftp -e 'open -u deploy,{s} ftp.internal'",
    "mosquitto_passwd -b passwd bot {s}",
    "ipmitool -H bmc -U admin -P {s} power status",
    "xfreerdp /u:admin /p:{s} /v:host",
    "gpg --batch --passphrase {s} -d secrets.gpg",
    "cqlsh -u cassandra -p {s} db.internal",
    "cypher-shell -u neo4j -p {s}",
    "rabbitmqadmin -u admin -p {s} list queues",
    "nmcli dev wifi connect HomeNet password {s}",
    "wpa_passphrase HomeNet {s} > wpa.conf",
    "neo4j-admin dbms set-initial-password {s}",
]


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.tuples(st.sampled_from(_PROSE), _SEED), st.tuples(st.sampled_from(_PASSWORDS), _PASSWORD)))
def test_a_redacted_text_holds_no_part_of_the_secret_and_is_redacted_once(case: tuple[str, str]) -> None:
    template, secret = case
    clean, n = redact(template.format(s=secret))
    assert n >= 1
    assert _leftover(template, secret, clean) == [], clean
    assert redact(clean) == (clean, 0)  # what is redacted is found no more


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["the 2FA secret is {s}", "MFA seed {s}", "authenticator key: {s}"]),
    st.from_regex(r"[A-Z]{4,31}", fullmatch=True),
)
def test_an_upper_case_name_beside_an_otp_word_is_kept(template: str, name: str) -> None:
    """A name of letters only (HTTPSCONNECTIONPOOL) shorter than a 160-bit seed is no seed: a seed is random, and
    a random 16 characters of base32 all letters is one in 28."""
    text = template.format(s=name)
    assert name in redact(text)[0]


@settings(max_examples=100, deadline=None)
@given(st.from_regex(r"[0-9]{1,3}(?:\.[0-9]{1,3}){1,2}", fullmatch=True), st.sampled_from(["pin", "PIN", "Pin"]))
def test_a_version_after_pin_is_kept(version: str, pin: str) -> None:
    for text in (f"{pin} the version to {version}", f"{pin}: {version}", f"the {pin} is {version}"):
        assert redact(text) == (text, 0)


# Commands that take a password as one argument, which a passphrase of several words is quoted to be.
_QUOTED_ARGUMENT = [
    "mysql -u root --password {q}{s}{q} -e 'select 1'",
    "mysql -u root -p{q}{s}{q} app",
    "sshpass -p {q}{s}{q} ssh deploy@db",
    "zip -P {q}{s}{q} backup.zip notes.txt",
    "7z a -p{q}{s}{q} backup.7z notes",
    "openssl enc -aes256 -pass {q}pass:{s}{q} -in a -out b",
    "gpg --batch --passphrase {q}{s}{q} -c notes.txt",
]


@given(
    st.sampled_from(_QUOTED_ARGUMENT),
    st.lists(st.from_regex(r"[a-z]{5,9}", fullmatch=True), min_size=2, max_size=4),
    st.sampled_from(['"', "'"]),
    st.booleans(),
)
def test_a_passphrase_quoted_as_one_argument_goes_whole_in_a_command_and_in_its_json(
    template: str, words: list[str], quote: str, as_json: bool
) -> None:
    import json

    command = template.format(q=quote, s=" ".join(words))
    # a tool call's input is stored as JSON text, where a double quote is written `\"`
    text = json.dumps({"command": command}) if as_json else command
    clean, _ = redact(text)
    assert [w for w in words if w in clean and w not in template] == [], clean
