"""27 kinds of secrets as they turn up in coding-agent transcripts, each with the value that must never leave.

The values are fake, generated once from a fixed seed, with the shape (alphabet, length, prefix) of the
real thing, so entropy checks see what they would see in a real leak. `SPLIT` is one secret cut across
two content blocks of the same message.
"""

from __future__ import annotations

import random
import string
from typing import NamedTuple

_rng = random.Random(12)
_B64 = string.ascii_letters + string.digits + "+/"
_ALNUM = string.ascii_letters + string.digits


def _r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


class Planted(NamedTuple):
    kind: str
    text: str  # the line as a user, a tool or the model would write it
    secret: str  # what must not appear anywhere outside the raw transcript


def _kinds() -> list[Planted]:
    def k(kind: str, template: str, secret: str) -> Planted:
        return Planted(kind, template.format(s=secret), secret)

    return [
        k("anthropic_key", "ANTHROPIC_API_KEY is unset; I used {s} here", "sk-ant-api03-" + _r(_ALNUM, 40)),
        k("openai_key", "client = OpenAI(api_key='{s}')", "sk-proj-" + _r(_ALNUM, 48)),
        k("aws_access_key_id", "aws_access_key_id = {s}", "AKIA" + _r(string.ascii_uppercase + string.digits, 16)),
        k("aws_secret_bare", "the secret is {s} (from the console)", _r(_B64, 40)),
        k("github_classic", "git clone https://{s}@github.com/acme/app.git", "ghp_" + _r(_ALNUM, 36)),
        k("github_fine_grained", "GH_TOKEN: {s}", "github_pat_" + _r(_ALNUM, 22) + "_" + _r(_ALNUM, 59)),
        k("gitlab_token", "curl --header 'PRIVATE-TOKEN: {s}' https://gitlab.example", "glpat-" + _r(_ALNUM, 20)),
        k("slack_token", "SLACK says invalid_auth for {s}", "xoxb-" + _r(string.digits, 12) + "-" + _r(_ALNUM, 24)),
        k("google_api_key", "maps key {s} in index.html", "AIza" + _r(_ALNUM + "_-", 35)),
        k("stripe_live", "stripe.api_key = {s}", "sk_live_" + _r(_ALNUM, 24)),
        k("stripe_restricted", "use {s} for the webhook job", "rk_live_" + _r(_ALNUM, 24)),
        k("npm_token", "//registry.npmjs.org/:_authToken={s}", "npm_" + _r(_ALNUM, 36)),
        k("huggingface_token", "huggingface-cli login --token {s}", "hf_" + _r(string.ascii_letters, 34)),
        k("sendgrid_key", "SENDGRID key {s} rejected", "SG." + _r(_ALNUM + "_-", 22) + "." + _r(_ALNUM + "_-", 43)),
        k("jwt", "the cookie was {s}", "eyJhbGciOiJIUzI1NiJ9." + _r(_ALNUM, 40) + "." + _r(_ALNUM, 43)),
        k("bearer", "-H 'Authorization: Bearer {s}'", _r(_ALNUM, 32)),
        k("basic_auth", "Authorization: Basic {s}", _r(_ALNUM, 28) + "=="),
        k("private_key", "-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----", _r(_B64, 64)),
        k("url_password", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", _r(_ALNUM, 14)),
        k("url_password_special", "psql postgres://admin:{s}@db.internal/app failed", "p@ss/w0rd" + _r(_ALNUM, 6)),
        k("env_plain", "DB_PASSWORD={s}", _r(_ALNUM, 16)),
        k("env_quoted", 'SECRET_KEY="{s}"', _r(_ALNUM, 10) + " " + _r(_ALNUM, 12)),
        k("json_api_key", '{{"api_key": "{s}", "region": "eu"}}', _r(_ALNUM, 32)),
        k("cli_password_flag", "mysql --password {s} -u root", _r(_ALNUM, 14)),
        k("cli_short_password", "mysql -uroot -p{s} appdb", _r(_ALNUM, 14)),
        k("bare_base64_token", "paste this: {s}", _r(_B64, 44)),
        k("azure_storage_key", "AccountName=acme;AccountKey={s};EndpointSuffix=core", _r(_B64, 86) + "=="),
    ]


KINDS: list[Planted] = _kinds()

# One secret cut in two: the first block ends with the head of the key, the second starts with its tail.
_split_secret = "sk_live_" + _r(_ALNUM, 24)
SPLIT = Planted("split_across_blocks", f"stripe key {_split_secret[:14]}|{_split_secret[14:]} ok", _split_secret)


def _held_out() -> list[Planted]:
    """17 kinds beyond the 27 above, in the shapes an outside review found leaking (a Slack webhook, a Twilio
    token, `sshpass -p`, `.env` lines, `curl -u`, a `.netrc` password) and their relatives."""

    def k(kind: str, template: str, secret: str) -> Planted:
        return Planted(kind, template.format(s=secret), secret)

    hexes = string.digits + "abcdef"
    return [
        k(
            "slack_webhook",
            "curl -X POST -d @msg.json https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/{s}",
            _r(_ALNUM, 24),
        ),
        k(
            "discord_webhook",
            "WEBHOOK=https://discord.com/api/webhooks/{s}",
            "1234567890123456789/" + _r(_ALNUM + "_-", 68),
        ),
        k(
            "teams_webhook",
            "post to https://acme.webhook.office.com/webhookb2/{s}",
            f"{_r(hexes, 8)}-{_r(hexes, 4)}-{_r(hexes, 4)}@{_r(hexes, 8)}/IncomingWebhook/{_r(hexes, 32)}/{_r(hexes, 8)}",
        ),
        k("twilio_token", 'client = Client("AC' + _r(hexes, 32) + '", "{s}")', _r(hexes, 32)),
        k("twilio_env", "TWILIO_AUTH_TOKEN={s}", _r(hexes, 32)),
        k("sshpass", "sshpass -p {s} ssh deploy@10.0.0.5 'systemctl restart app'", _r(_ALNUM, 14)),
        k("env_db_pass", "DB_PASS={s}", _r(_ALNUM, 12)),
        k("env_mailgun_key", "MAILGUN_KEY=key-{s}", _r(hexes, 32)),
        k("env_pgpass", "PGPASS={s} psql -h db -U app", _r(_ALNUM, 12)),
        k("env_export_secret", "export SESSION_SECRET='{s}'", _r(_ALNUM, 20)),
        k("curl_user", "curl -u admin:{s} https://api.internal/v1/status", _r(_ALNUM, 16)),
        k("httpie_auth", "http -a deploy:{s} POST api.internal/deploy", _r(_ALNUM, 16)),
        k("netrc_lines", "machine api.heroku.com\n  login me@acme.io\n  password {s}", _r(hexes, 36)),
        k("netrc_one_line", "machine github.com login bot password {s}", _r(_ALNUM, 18)),
        k("docker_login", "docker login -u ci -p {s} registry.acme.io", _r(_ALNUM, 18)),
        k("libpq_conninfo", "psql 'host=db user=app password={s} dbname=app'", _r(_ALNUM, 15)),
        k("ftp_userinfo", "lftp ftp://backup:{s}@files.acme.io/db.sql", _r(_ALNUM, 13)),
    ]


HELD_OUT: list[Planted] = _held_out()
