"""The local token estimate, calibrated against the usage Claude Code transcripts record (bench/calibrate_tokens.py
prints the fit and its held-out error); no network. A module of its own: budgets, prompts, estimates and the report
count tokens without loading the renderer and its redactor."""

from __future__ import annotations

__all__ = [
    "NEWLINE_UNITS",
    "TOKENS_PER_NEWLINE",
    "TOKENS_PER_SYMBOL",
    "TOKENS_PER_WORD",
    "estimate_tokens",
    "token_pieces",
    "token_units",
]

# A word is a run of ASCII letters, a symbol any other non-space byte (a digit,
# punctuation, each UTF-8 byte of a non-ASCII character); newlines are counted apart (they carry indentation).
# Weights are in hundredths of a token so that per-line sums (compaction) add up exactly to the whole text's.
TOKENS_PER_WORD = 1.27
TOKENS_PER_SYMBOL = 0.64
TOKENS_PER_NEWLINE = 1.36
_WORD, _SYMBOL, NEWLINE_UNITS = (round(w * 100) for w in (TOKENS_PER_WORD, TOKENS_PER_SYMBOL, TOKENS_PER_NEWLINE))
_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_WORDS_ONLY = bytes(ord("a") if i in _LETTERS else ord(" ") for i in range(256))  # letters kept, rest a space
_NOT_SYMBOL = _LETTERS + b" \t\n\r\x0b\x0c"  # deleted to leave only the symbols


def token_pieces(text: str) -> tuple[int, int, int]:
    """`text`'s words, symbols and newlines: what the estimate weighs. A few C-level passes (encode, translate,
    split, count): no pattern, no Python loop over characters."""
    data = text.encode("utf-8", "surrogatepass")
    return len(data.translate(_WORDS_ONLY).split()), len(data.translate(None, _NOT_SYMBOL)), text.count("\n")


def token_units(text: str) -> int:
    """`text`'s estimated tokens in hundredths: additive over texts joined by whitespace."""
    words, symbols, newlines = token_pieces(text)
    return _WORD * words + _SYMBOL * symbols + NEWLINE_UNITS * newlines


def estimate_tokens(text: str) -> int:
    """Local token estimate, calibrated on the usage transcripts record (bench/calibrate_tokens.py); no network."""
    return -(-token_units(text) // 100)
