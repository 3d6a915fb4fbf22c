"""Every kind of secret but base64 of a credential, in the order the redactor reads them (`PLAIN_RULES`).

Each family is a module of its own (`core.secret_keys`, `core.secret_tokens`, `core.secret_web`,
`core.secret_arguments`, `core.secret_assignments`, `core.secret_prose`); `core.redact` adds the rule that decodes
base64 and finds and masks them all.
"""

from __future__ import annotations

from core.secret_arguments import ARGUMENT_RULES
from core.secret_assignments import ASSIGNMENT_RULES
from core.secret_keys import KEY_RULES
from core.secret_prose import PROSE_RULES
from core.secret_rule import Rule
from core.secret_tokens import TOKEN_RULES
from core.secret_web import WEB_RULES

__all__ = ["PLAIN_RULES"]

# The order across families is the redactor's: where two rules' spans start at the same place, the one listed first
# gives the marker (`--token hvs.…` is a password given to a command before it is a Vault token), and ingest's
# families of rules follow it.
_ORDER = (
    "private_key",
    "putty_key",
    "anthropic_key",
    "openai_key",
    "stripe_key",
    "aws_key",
    "github_token",
    "gitlab_token",
    "slack_token",
    "google_key",
    "npm_token",
    "huggingface_token",
    "atlassian_token",
    "sendgrid_key",
    "jwt",
    "authorization",
    "bearer",
    "connection_string",
    "password_flag",
    "pass_option",
    "openssl_key",
    "short_password_flag",
    "zip_password",
    "redis_password",
    "client_password",
    "rabbitmq_password",
    "mysqladmin_password",
    "net_user_password",
    "sqlplus_password",
    "lftp_password",
    "positional_passphrase",
    "windows_password_option",
    "vault_token",
    "webhook",
    "url_signature",
    "twilio_token",
    "sshpass",
    "docker_login",
    "piped_password",
    "sudo_herestring",
    "htpasswd",
    "user_password_flag",
    "netrc",
    "pgpass",
    "env_assignment",
    "registry_auth",
    "quoted_assignment",
    "assignment",
    "named_in_prose",
    "pin",
    "otp_seed",
    "recovery_codes",
    "login_pair",
)


def _ordered() -> list[Rule]:
    families = (KEY_RULES, TOKEN_RULES, WEB_RULES, ARGUMENT_RULES, ASSIGNMENT_RULES, PROSE_RULES)
    by_name = {rule.name: rule for family in families for rule in family}
    assert sorted(by_name) == sorted(_ORDER), "every rule has its place in the order, once"
    return [by_name[name] for name in _ORDER]


PLAIN_RULES: list[Rule] = _ordered()
