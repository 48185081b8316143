"""Secrets kept out of what the model reads: API keys, tokens and passwords become `***`.

The notebook's cells, outputs and variables are text the agent reads, and a notebook easily holds
a key: `env = os.environ`, `%env OPENAI_API_KEY=...`, a cell that displayed the environment. A
`Redactor` knows the secret values of the moment (environment variables whose names look secret,
plus values the session adds: what `.env` set, `--context` values) and replaces each in any text.
It also masks the value in lines that show a secret being set (`%env NAME=value`,
`password = "..."`, `--context key=value`), so a key typed into a cell is hidden even after the
variable is gone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["MASK", "MIN_SECRET_LENGTH", "Redactor", "is_secret_variable", "looks_secret"]

MASK = "***"
MIN_SECRET_LENGTH = 8
"""Shorter values of secret-looking variables are not replaced (`AUTH_MODE=basic` would mangle
every "basic" in the notebook)."""

_SECRET_WORDS = frozenset(
    {"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL",
     "CREDENTIALS", "AUTH", "PRIVATEKEY", "PASSPHRASE"}
)
_SECRET_ENDINGS = ("APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD")
_WORD_BOUNDARY = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_VALUE = r"""([^\s'"]\S*|'[^'\n]*'|"[^"\n]*")"""
_ENV_MAGIC = re.compile(rf"((?:%|!)?(?:set_)?env:?\s+)({_NAME})(\s*=\s*|\s+){_VALUE}")
_ASSIGNMENT = re.compile(rf"""(["']?)({_NAME})\1(\s*[:=]\s*)(["'])([^"'\n]+)\4""")
_ENVIRON_SET = re.compile(
    rf"""(environ(?:\.setdefault\(|\[)\s*["'])({_NAME})(["']\s*(?:\]\s*=|,)\s*)(["'])([^"'\n]+)\4"""
)
_CONTEXT_OPTION = re.compile(r"""(--context(?:\s+|=)["']?[^\s="']+=)""" + _VALUE)


def looks_secret(name: str) -> bool:
    """Tell whether a variable name looks like it holds a secret (`OPENAI_API_KEY`, `dbPassword`).

    The name is split into words (at `_` and at lower-to-upper case changes); a word such as KEY,
    TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL(S) or AUTH, or one ending in APIKEY, TOKEN,
    SECRET or PASSWORD, makes it secret. `monkey`, `author`, `tokenizer` and `KeyError` are not.
    """
    if name.endswith(("Error", "Exception", "Warning")):  # KeyError: 'x' names no secret
        return False
    for word in _WORD_BOUNDARY.split(name):
        upper = word.upper()
        if upper in _SECRET_WORDS or (upper.endswith(_SECRET_ENDINGS) and len(upper) > 4):
            return True
    return False


def is_secret_variable(name: str, value: Any) -> bool:
    """Tell whether a kernel variable must stay out of `/notebook/vars/`.

    The environment itself (`os.environ`, or a copy of it as a dict), and text, bytes or mappings
    under a secret-looking name. A DataFrame called `token_counts` stays visible.
    """
    if isinstance(value, os._Environ):
        return True
    if isinstance(value, dict) and value and _mostly_environment(value):
        return True
    return looks_secret(name) and isinstance(value, str | bytes | Mapping)


def _mostly_environment(value: dict[Any, Any]) -> bool:
    try:
        shared = sum(1 for key, item in value.items() if os.environ.get(key) == item)
    except TypeError:
        return False
    return shared >= 5 and shared * 2 >= len(value)


def _environment_secrets(environ: Mapping[str, str]) -> set[str]:
    return {
        value
        for name, value in environ.items()
        if looks_secret(name) and len(value) >= MIN_SECRET_LENGTH
    }


class Redactor:
    """Replaces secret values with `***` in text; callable (`redact(text) -> text`).

    Args:
        extra: Returns more values to hide, asked at each call: values `.env` set, `--context`
            values, secret-named variables of the kernel. Values shorter than 4 characters are
            ignored.
        environ: The environment whose secret-looking variables are hidden (default `os.environ`).
    """

    def __init__(
        self,
        extra: Callable[[], Iterable[str]] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.extra = extra
        self.environ = environ if environ is not None else os.environ

    def values(self) -> list[str]:
        """The values hidden now, longest first (so a key is masked before a part of it)."""
        found = _environment_secrets(self.environ)
        if self.extra is not None:
            found.update(value for value in self.extra() if isinstance(value, str))
        return sorted((v for v in found if len(v.strip()) >= 4), key=len, reverse=True)

    def frozen(self) -> Redactor:
        """A redactor of the values hidden now, for the many texts of one listing or search."""
        values = self.values()
        return Redactor(extra=lambda: values, environ={})

    def __call__(self, text: str) -> str:
        """`text` with every secret value, and every value shown being set as a secret, masked."""
        return _masked(text, self.values()) if text else text

    def lines(self, lines: Iterable[str]) -> list[str]:
        """Each line redacted; the secret values are gathered once for all of them."""
        values = self.values()
        return [_masked(line, values) for line in lines]


def _masked(text: str, values: list[str]) -> str:
    text = _mask_patterns(text)
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return text


def _mask_patterns(text: str) -> str:
    def env_magic(match: re.Match[str]) -> str:
        if not looks_secret(match.group(2)):
            return match.group(0)
        return match.group(1) + match.group(2) + match.group(3) + MASK

    def assignment(match: re.Match[str]) -> str:
        if not looks_secret(match.group(2)):
            return match.group(0)
        quote = match.group(4)
        return match.group(0)[: match.start(5) - match.start(0)] + MASK + quote

    if "env" in text:
        text = _ENV_MAGIC.sub(env_magic, text)
        text = _ENVIRON_SET.sub(assignment, text)
    if "--context" in text:
        text = _CONTEXT_OPTION.sub(lambda m: m.group(1) + MASK, text)
    return _ASSIGNMENT.sub(assignment, text)
