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
