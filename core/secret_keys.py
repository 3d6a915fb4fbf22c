"""Private keys in a text, block by block.

A PEM, OpenSSH, PGP or SSH2 private key block (to its END line, or cut short, to the end of the text; or only its
tail, its BEGIN in an earlier message), and a PuTTY key file.
"""

from __future__ import annotations

from core.patterns import Pattern
from core.secret_rule import Rule

__all__ = ["KEY_RULES"]

# A private key block of any kind (PEM, OpenSSH, PGP, SSH2, encrypted PEM), to its END line or, cut short, to the
# end of the text; and the tail of one whose BEGIN went in an earlier message (base64 lines, then the END line).
_KEY_BEGIN = "-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-{4,5}"
_KEY_END = "-{4,5} ?END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-{4,5}"
_NEWLINE = r"(?:\r?\n|(?:\\r)?\\n)"  # a line break, or one escaped in JSON text


KEY_RULES: list[Rule] = [
    Rule(
        "private_key",
        Pattern(rf"{_KEY_BEGIN}.*?(?:{_KEY_END}|$)|(?:[A-Za-z0-9+/=]+[ \t]*{_NEWLINE})+{_KEY_END}", dotall=True),
        "[REDACTED:private_key]",
        ("private key",),
        shape="-{4,5} ?(?:BEGIN|END) [A-Z0-9 ]*PRIVATE KEY",  # its BEGIN or END line: a literal RE2 skips to
    ),
    Rule(
        "putty_key",
        Pattern(r"PuTTY-User-Key-File-[0-9]+:.*?(?:Private-MAC:[ \t]*[0-9a-fA-F]+|$)", dotall=True),
        "[REDACTED:private_key]",
        ("putty-user-key-file",),
        shape="PuTTY-User-Key-File-[0-9]+:",
    ),
]
