"""Kinds of secrets as they turn up in coding-agent transcripts, each with the value that must never leave: 27
(`KINDS`), 17 held out (`HELD_OUT`), 38 new shapes of issue 40, 9 of a later attack and 23 of issue 41 (`NEW_SHAPES`)
and 4 cut across two messages (`SPLIT_MESSAGES`).

The values are fake, generated once from a fixed seed, with the shape (alphabet, length, prefix) of the
real thing, so entropy checks see what they would see in a real leak. `SPLIT` is one secret cut across
two content blocks of the same message.
"""

from __future__ import annotations

import base64
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


def _new_shapes() -> list[Planted]:
    """The shapes an outside review of issue 40 found stored (19 of its 29), each with relatives of the same family:
    private key blocks of any kind, signed URLs, registry credentials, a password fed to `sudo -S` (or any command
    reading one on stdin), `-pass pass:`, `-P`, `htpasswd -b`, `.pgpass` lines, a password or key named in prose,
    base64 of `user:password`. `SPLIT_MESSAGES` holds those cut across two messages."""

    def k(kind: str, template: str, secret: str) -> Planted:
        return Planted(kind, template.format(s=secret), secret)

    hexes = string.digits + "abcdef"

    def b64(text: str, urlsafe: bool = False) -> str:
        raw = text.encode()
        return (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode()

    def pw(n: int = 14) -> str:  # a password as people make them: letters, digits and a sign
        return _r(string.ascii_letters, n - 3) + _r(string.digits, 2) + _rng.choice("!#%&*+")

    body = "\n".join(_r(_B64, 64) for _ in range(3))
    return [
        k(
            "pgp_private_key",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{s}\n=x8Qz\n-----END PGP PRIVATE KEY BLOCK-----",
            body,
        ),
        k("openssh_private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----", body),
        k(
            "encrypted_pem",
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,"
            + _r("0123456789ABCDEF", 32)
            + "\n\n{s}\n-----END RSA PRIVATE KEY-----",
            body,
        ),
        k("pkcs8_encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n{s}\n-----END ENCRYPTED PRIVATE KEY-----", body),
        k(
            "putty_key",
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
            "AAAAC3NzaC1lZDI1NTE5AAAAIOr\nPrivate-Lines: 1\n{s}\nPrivate-MAC: " + _r(hexes, 64),
            _r(_B64, 44),
        ),
        k(
            "ssh2_key",
            "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{s}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----",
            body,
        ),
        k(
            "azure_sas_url",
            "az storage blob download --blob-url 'https://acme.blob.core.windows.net/backups/db.bak?sv=2022-11-02"
            "&ss=b&srt=o&sp=r&se=2026-12-01T00:00:00Z&spr=https&sig={s}'",
            _r(_ALNUM, 30) + "%2B" + _r(_ALNUM, 10) + "%3D",
        ),
        k(
            "azure_sas_connection",
            "BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig={s}",
            _r(_ALNUM, 43) + "%3D",
        ),
        k(
            "s3_presigned",
            "curl 'https://b.s3.amazonaws.com/x.tar?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={s}'",
            _r(hexes, 64),
        ),
        k("docker_config_auth", '{{"auths": {{"registry.acme.io": {{"auth": "{s}"}}}}}}', b64("ci:" + pw())),
        k("npmrc_auth", "_auth={s}\nemail=ci@acme.io", b64("ci:" + pw())),
        k("docker_password_stdin", "echo {s} | docker login -u ci --password-stdin registry.acme.io", pw()),
        k("sudo_echo_quoted", "echo '{s}' | sudo -S apt-get install -y nginx", pw()),
        k("sudo_echo_bare", "echo {s} | sudo -kS systemctl restart app", pw()),
        k("sudo_printf", "printf '%s\\n' {s} | sudo -S reboot", pw()),
        k("sudo_herestring", "sudo -S whoami <<< {s}", pw()),
        k("openssl_pass", "openssl enc -aes-256-cbc -salt -in db.sql -out db.enc -pass pass:{s}", pw()),
        k("openssl_passin", "openssl rsa -in key.pem -passin pass:{s} -out plain.pem", pw()),
        k("openssl_k", "openssl enc -d -aes256 -k {s} -in backup.enc -out backup.tar", pw()),
        k("pkcs12_password", "openssl pkcs12 -export -in cert.pem -inkey k.pem -out c.p12 -password pass:{s}", pw()),
        k("keytool_storepass", "keytool -list -keystore app.jks -storepass {s}", pw()),
        k("zip_P", "zip -r -P {s} backup.zip data/", pw()),
        k("unzip_P", "unzip -o -P {s} backup.zip", pw()),
        k("7z_p", "7z a -p{s} -mhe=on secrets.7z docs/", pw()),
        k("htpasswd_b", "htpasswd -b /etc/nginx/.htpasswd admin {s}", pw()),
        k("htpasswd_nb", "htpasswd -nbB admin {s} > .htpasswd", pw()),
        k("htpasswd_bc", "sudo htpasswd -bc .htpasswd deploy {s}", pw()),
        k("pgpass_line", "db.internal:5432:app:app_user:{s}", pw()),
        k("pgpass_echo", "echo 'localhost:5432:*:postgres:{s}' >> ~/.pgpass && chmod 600 ~/.pgpass", pw()),
        k("pgpass_wildcards", "*:*:*:replicator:{s}", pw()),
        k("prose_password", "the password is {s}", pw()),
        k("prose_admin_password", "The admin password for staging is {s}.", pw()),
        k("prose_api_key", "my API key is {s}", _r(_ALNUM, 20) + _r(string.digits, 4)),
        k(
            "prose_quoted",
            'the passphrase is "{s}"',
            _r(string.ascii_lowercase, 6) + " " + _r(string.ascii_lowercase, 6),
        ),
        k("prose_token_was", "Your access token was {s}, keep it safe", _r(_ALNUM, 22) + "9"),
        k("basic_b64_bare", "the header value is {s}", b64("deploy:" + pw())),
        k("b64_decode", "echo {s} | base64 -d", b64("admin:" + pw())),
        k("b64_urlsafe", "creds={s}", b64("svc-backup:" + pw(16) + "?>", urlsafe=True)),
        # a later black-box attack's (last: the values drawn before them stay as they were)
        k("redis_cli_a", "no, use `redis-cli -a {s} ping` to check the cache", pw()),
        k("redis_cli_pass", "valkey-cli -h cache.internal --pass {s} info", pw()),
        k("vault_service_token", "log in with `vault login {s}` first", "hvs." + _r(_ALNUM + "_-", 90)),
        k("vault_batch_token", "VAULT_TOKEN={s} vault kv get secret/app", "hvb." + _r(_ALNUM, 120)),
        k("mongosh_p", "no, use `mongosh -u admin -p {s} mongodb://db:27017/app`", pw()),
        k("ldapsearch_w", "ldapsearch -x -D cn=admin,dc=acme -w {s} -b dc=acme", pw()),
        k("sqlcmd_p", "sqlcmd -S db.internal -U sa -P {s} -Q 'select 1'", pw()),
        k("mosquitto_p", "mosquitto_pub -h mqtt.internal -u bot -P {s} -t t -m x", pw()),
        k("wp_user_pass", "wp user update 1 --user_pass={s}", pw()),
        # issue 41's black-box attack: secrets said in prose, passwords given as a command's positional argument
        *_issue_41(),
    ]


# Issue 41's values come from a generator of their own: the values drawn above, and `SPLIT_MESSAGES` after them, stay
# as they were.
_rng41 = random.Random(41)
_B32 = string.ascii_uppercase + "234567"


def _issue_41() -> list[Planted]:
    def k(kind: str, template: str, secret: str) -> Planted:
        return Planted(kind, template.format(s=secret), secret)

    def r(alphabet: str, n: int) -> str:
        return "".join(_rng41.choice(alphabet) for _ in range(n))

    def seed(n: int) -> str:  # a base32 seed as authenticator apps take it: random, so holding a digit of 2-7
        return r(_B32, n - 1) + _rng41.choice("234567")

    def word() -> str:
        return r(string.ascii_uppercase, 1) + r(string.ascii_lowercase, 4)

    def pw() -> str:  # as people make them ("Falcon-Rain-2291")
        return f"{word()}-{word()}-{r(string.digits, 4)}"

    grouped = " ".join(r(_B32.lower(), 4) for _ in range(8))
    codes = " ".join(f"{r(string.digits, 4)}-{r(string.digits, 4)}" for _ in range(4))
    atlassian = "ATATT3xFfGF0" + r(_ALNUM + "_-", 180) + "=" + r("0123456789ABCDEF", 8)
    return [
        k("otp_2fa_secret", "no, use `make login`; the 2FA secret is {s}", seed(16)),
        k("otp_authenticator_key", "authenticator key: {s}", seed(32)),
        k("otp_mfa_seed", "no, use `make login`; MFA seed {s}", seed(16)),
        k("otp_seed_grouped", "the OTP seed is {s} (from the setup page)", grouped),
        k("recovery_codes", "my recovery codes are {s}, keep them safe", codes),
        k("pw_label", "no, use `make login`, pw: {s}", pw()),
        k("pin_prose", "no, use `make unlock`; the PIN is {s}", r(string.digits, 6)),
        k("login_pair_and", "no, use `make login`; the login for staging is admin and {s}", pw()),
        k("creds_colon", "creds are admin:{s}", pw()),
        k("login_as_slash", "no, use `make login` as admin / {s}", pw()),
        k("rabbitmq_change_password", "no, run `rabbitmqctl change_password app {s}`", pw()),
        k("rabbitmq_add_user", "rabbitmqctl add_user deploy {s} && rabbitmqctl set_user_tags deploy admin", pw()),
        k("mysqladmin_password", "mysqladmin -u root -p password {s}", pw()),
        k("net_user", "net user deploy {s} /add", pw()),
        k("net_use", "net use Z: \\\\files\\share {s} /user:ACME\\deploy", pw()),
        k("sqlplus", "sqlplus app/{s}@//db.internal:1521/ORCL", pw()),
        k("lftp_u", "no, use `lftp -u deploy,{s} ftp.internal`", pw()),
        k("mosquitto_passwd_b", "mosquitto_passwd -b /etc/mosquitto/passwd bot {s}", pw()),
        k("ipmitool_P", "ipmitool -I lanplus -H bmc.internal -U admin -P {s} chassis status", pw()),
        k("xfreerdp_p", "xfreerdp /u:admin /p:{s} /v:win.internal", pw()),
        k("cmdkey_pass", "cmdkey /generic:files.internal /user:deploy /pass:{s}", pw()),
        k("smbpasswd_stdin", 'echo -e "{s}\\n{s}" | smbpasswd -a -s deploy', pw()),
        k("atlassian_token", "no, use `make deploy` with the token {s}", atlassian),
    ]


NEW_SHAPES: list[Planted] = _new_shapes()


class Split(NamedTuple):
    kind: str
    first: str  # one message
    second: str  # the next one
    secrets: tuple[str, ...]  # what must not appear: each half, as neither message alone shows it


def _split_messages() -> list[Split]:
    key = "sk-ant-api03-" + _r(_ALNUM, 40)
    prose = _r(string.ascii_letters, 9) + _r(string.digits, 3) + "!"
    flag = _r(_ALNUM, 14)
    lines = [_r(_B64, 64) for _ in range(4)]
    return [
        Split("token_cut", f"here is the key: {key[:20]}", f"{key[20:]} (rest of it)", (key[13:20], key[20:])),
        Split("prose_continued", "my db password is", prose, (prose,)),
        Split("flag_continued", "sshpass -p", f"{flag} ssh deploy@10.0.0.5", (flag,)),
        Split(
            "key_block_split",
            "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines[:2]),
            "\n".join(lines[2:]) + "\n-----END OPENSSH PRIVATE KEY-----",
            tuple(lines),
        ),
    ]


SPLIT_MESSAGES: list[Split] = _split_messages()
