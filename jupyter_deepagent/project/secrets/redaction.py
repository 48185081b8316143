"""Secrets kept out of what the model reads: API keys, tokens and passwords become `***`.

The notebook's cells, outputs and variables are text the agent reads, and a notebook easily holds
a key: `env = os.environ`, `%env OPENAI_API_KEY=...`, a cell that displayed the environment. A
`Redactor` masks, in any text:

- the secret **values** of the moment (environment variables whose names look secret, plus values
  the session adds: what `.env` set, `--context` values, secret-named kernel variables), also in
  their escaped spellings (JSON, CSV, Python `repr`, URL and HTML escaping), so a password with a
  quote or a backslash is caught in `/notebook/vars/*.json` and `.csv` too; but only values too
  long and random to guess (`_masks_by_value`);
- values shown being **set** as secrets and credentials recognised by their **shape**
  (`%env NAME=value`, `password = "..."`, `Authorization: Bearer ...`, `AKIA...`, `AIza...`,
  `ghp_...`, private-key blocks...: see `patterns`).

Why only values too long and random to guess: a mask that depends on the secret answers the
question "is this text a secret?". The agent can write a word list and look where the `***`
shows (or grep for it): a user name `admin` or a password `hunter2` is found in two calls. A
value of 56 bits or more cannot be found that way (the agent would have to know it already),
so `_masks_by_value` keeps only those; a short password is still masked where it shows being
set (`DB_PASSWORD=hunter2`), by its name, which tells nothing about the value. Texts the agent
wrote itself are not masked at all (`masked_text.MaskedTexts.wrote`).

Masking works on spans (`spans(text)`): callers that must not act on a masked value (an edit
whose match touches one) ask where the masks are. A mask never swallows a line break, so the
masked text has the same lines as the original, and every step is linear in the text's length.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from jupyter_deepagent.project.secrets._presence import CharacterPresence
from jupyter_deepagent.project.secrets.patterns import Span, pattern_spans

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "Redactor",
    "Span",
    "apply_masks",
    "is_secret_variable",
    "looks_secret",
    "masked_interpolation",
    "merged",
    "names_secrets",
]

MASK = "***"
MIN_SECRET_LENGTH = 8
"""Shorter values are never masked by value (`AUTH_MODE=basic` would mangle every "basic" in the
notebook, and a short value is found by guessing)."""
_MIN_SECRET_BITS = 56
"""A value is masked by value only if `_value_bits` gives it at least this many bits."""
_MIN_DISTINCT = 5
_CLASS_SIZES = (
    (str.islower, 26),
    (str.isupper, 26),
    (str.isdigit, 10),
)
_OTHER_CLASS_SIZE = 33  # punctuation and space in ASCII; any other character counts here too


def _value_bits(value: str) -> float:
    """A rough strength of a secret value: its length times log2 of the size of the character
    classes it uses (26 lower-case letters, 26 upper-case, 10 digits, 33 others).

    `hunter2` has 7 × log2(36) = 36 bits, `admin` 24, a random 20-character hex token 103, a
    39-character Google API key 232. A guessable phrase of many letters gets many bits too:
    this measures length and variety, not how famous a password is.
    """
    alphabet = 0
    rest = value
    for test, size in _CLASS_SIZES:
        if any(test(char) for char in rest):
            alphabet += size
            rest = "".join(char for char in rest if not test(char))
    if rest:
        alphabet += _OTHER_CLASS_SIZE
    return len(value) * math.log2(alphabet) if alphabet > 1 else 0.0


@lru_cache(maxsize=4096)
def _masks_by_value(value: str) -> bool:
    """Tell whether `value` is masked wherever it shows, by its value: only a value too long
    and random to guess, so that a mask never tells the agent which of its guesses is right.

    The rule: at least `MIN_SECRET_LENGTH` (8) characters, at least 5 different ones, and at
    least `_MIN_SECRET_BITS` (56) bits by `_value_bits` (12 lower-case letters, 11 lower-case
    letters and digits, 10 of mixed case and digits, or 9 with punctuation as well). `admin`,
    `hunter2` and `password1` are not masked by value; `hunter2-horse`, a UUID or an API key are.
    """
    stripped = value.strip()
    return (
        len(stripped) >= MIN_SECRET_LENGTH
        and len(set(stripped)) >= _MIN_DISTINCT
        and _value_bits(stripped) >= _MIN_SECRET_BITS
    )


_SECRET_WORDS = frozenset(
    {
        "KEY",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "PRIVATEKEY",
        "PASSPHRASE",
        # plurals: a dict or list of them (`client_secrets`); KEYS and TOKENS only after a word
        # that makes them credentials (`api_keys`, `access_tokens`; not `primary_keys`,
        # `max_tokens`), see _PLURAL_AFTER
        "APIKEYS",
        "SECRETS",
        "PASSWORDS",
        "PASSWDS",
        "PRIVATEKEYS",
        "PASSPHRASES",
    }
)
_SECRET_ENDINGS = (
    "APIKEY",
    "APIKEYS",
    "TOKEN",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWORDS",
    "PASSWD",
)
_PLURAL_AFTER = frozenset(
    {
        "ACCESS",
        "REFRESH",
        "AUTH",
        "BEARER",
        "API",
        "ID",
        "SESSION",
        "OAUTH",
        "SECRET",
        "PRIVATE",
        "SSH",
        "SIGNING",
        "ENCRYPTION",
        "CLIENT",
        "SERVICE",
    }
)
"""Words before KEYS or TOKENS that make them credentials (`api_keys`, `access_tokens`), not
columns or counts (`primary_keys`, `num_tokens`)."""
_WORD_BOUNDARY = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


@lru_cache(maxsize=4096)
def looks_secret(name: str) -> bool:
    """Tell whether a variable name looks like it holds a secret (`OPENAI_API_KEY`, `dbPassword`).

    The name is split into words (at `_` and at lower-to-upper case changes); a word such as KEY,
    TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL(S) or AUTH (or a plural: SECRETS, PASSWORDS;
    KEYS and TOKENS only after API, ACCESS, PRIVATE, ...), or one ending in APIKEY, TOKEN, SECRET or
    PASSWORD, makes it secret. `monkey`, `author`, `tokenizer`, `max_tokens` and `KeyError` are
    not.
    """
    if name.endswith(("Error", "Exception", "Warning")):  # KeyError: 'x' names no secret
        return False
    before = ""
    for word in _WORD_BOUNDARY.split(name):
        upper = word.upper()
        if upper in _SECRET_WORDS or (upper.endswith(_SECRET_ENDINGS) and len(upper) > 4):
            return True
        if upper in ("KEYS", "TOKENS") and before in _PLURAL_AFTER:
            return True
        before = upper
    return False


@lru_cache(maxsize=4096)
def names_secrets(name: str) -> bool:
    """Tell whether a name says its value *is* secrets (`api_keys`, `secrets`, `passwords`):
    its last word is a secret word, where `looks_secret` takes a word anywhere (`token_map`,
    `id2token`, a vocabulary, look secret but hold none). Texts inside a dict or list are
    masked only under such a name."""
    words = [word.upper() for word in _WORD_BOUNDARY.split(name) if word]
    if not words or name.endswith(("Error", "Exception", "Warning")):
        return False
    last, before = words[-1], words[-2] if len(words) > 1 else ""
    return last in _SECRET_WORDS or (last in ("KEYS", "TOKENS") and before in _PLURAL_AFTER)


def is_secret_variable(name: str, value: Any) -> bool:
    """Tell whether a kernel variable must stay out of `/notebook/vars/`.

    The environment itself (`os.environ`, or a copy of it as a dict), text, bytes or mappings
    under a secret-looking name, and lists or tuples under a name that says they are secrets
    (`api_keys`). A DataFrame called `token_counts` stays visible.
    """
    if isinstance(value, os._Environ):
        return True
    if isinstance(value, dict) and value and _mostly_environment(value):
        return True
    if isinstance(value, list | tuple):  # `api_keys = ["sk-...", ...]`
        return names_secrets(name)
    return looks_secret(name) and isinstance(value, str | bytes | Mapping)


def _mostly_environment(value: dict[Any, Any]) -> bool:
    try:
        shared = sum(1 for key, item in value.items() if os.environ.get(key) == item)
    except TypeError:
        return False
    return shared >= 5 and shared * 2 >= len(value)


def _environment_secrets(environ: Mapping[str, str]) -> set[str]:
    return {
        value for name, value in environ.items() if looks_secret(name) and _masks_by_value(value)
    }


def _escaped_forms(value: str) -> set[str]:
    """`value` and the spellings it takes when written inside JSON, CSV, Python, a URL or HTML.

    A password `pa"ss\\word` is shown as `pa\\"ss\\\\word` in a JSON file and as `pa""ss\\word`
    in a CSV cell; masking only the raw value would miss both. A value holding line breaks is
    split into its lines (a mask never crosses a line break).
    """
    forms = {
        value,
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1],
        value.replace('"', '""'),
        repr(value)[1:-1],
        value.replace("\\", "\\\\").replace("'", "\\'"),
        value.replace("\\", "\\\\").replace('"', '\\"'),
        html.escape(value),
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value),
    }
    lines = {line for form in forms for line in form.splitlines()}
    return {line for line in lines if len(line.strip()) >= 4}


_MEMO_CHARS = 200
"""Texts this long are masked once while the values to hide stay the same (`_masked_long`)."""


@lru_cache(maxsize=64)
def _masked_long(searched: tuple[str, ...], text: str) -> str:
    """`text` masked by a redactor that searches the spellings `searched` (and the patterns)."""
    return apply_masks(text, _spans(searched, text, 0, len(text)))


def _spans(searched: tuple[str, ...], text: str, start: int, end: int) -> list[Span]:
    """Where `text[start:end]` holds one of the spellings `searched` or a secret's pattern."""
    presence = CharacterPresence(text, start, end)
    found = pattern_spans(text, looks_secret, start, end, presence)
    for form in searched:
        at = presence.find(form)
        while at != -1:
            found.append((at, at + len(form)))
            at = text.find(form, at + len(form), end)
    return merged(found)


def merged(spans: Iterable[Span]) -> list[Span]:
    """Sort spans and join the ones that overlap or touch."""
    result: list[Span] = []
    for start, end in sorted(spans):
        if result and start <= result[-1][1]:
            if end > result[-1][1]:
                result[-1] = (result[-1][0], end)
        else:
            result.append((start, end))
    return result


def apply_masks(text: str, spans: list[Span], start: int = 0, end: int | None = None) -> str:
    """`text[start:end]` with each of the (merged) `spans` replaced by `***`."""
    end = len(text) if end is None else end
    parts: list[str] = []
    position = start
    for span_start, span_end in spans:
        parts += [text[position:span_start], MASK]
        position = span_end
    parts.append(text[position:end])
    return "".join(parts)


class Redactor:
    """Replaces secret values with `***` in text; callable (`redact(text) -> text`).

    Args:
        extra: Returns more values to hide, asked at each call: values `.env` set, `--context`
            values, secret-named variables of the kernel. Only values `_masks_by_value` accepts
            are masked (the others could be found by guessing, see the module's docstring).
        environ: The environment whose secret-looking variables are hidden (default `os.environ`).
    """

    def __init__(
        self,
        extra: Callable[[], Iterable[str]] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.extra = extra
        self.environ = environ if environ is not None else os.environ
        self._forms: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self._environment: tuple[tuple[object, ...], frozenset[str]] = ((), frozenset())

    def _environment_values(self) -> set[str]:
        """The environment's secret values, found again only when the environment changed (a
        run asks at every text it masks; reading the environment anew costs ~10 µs a name)."""
        # os.environ decodes each item in Python; its raw dict compares in one C call
        raw = (
            getattr(self.environ, "_data", None) if isinstance(self.environ, os._Environ) else None
        )
        items = tuple((raw if isinstance(raw, dict) else self.environ).items())
        if items != self._environment[0]:
            self._environment = (items, frozenset(_environment_secrets(self.environ)))
        return set(self._environment[1])

    def values(self) -> list[str]:
        """The values hidden now, longest first (so a key is masked before a part of it)."""
        found = self._environment_values()
        if self.extra is not None:
            found.update(value for value in self.extra() if isinstance(value, str))
        return sorted((v for v in found if _masks_by_value(v)), key=len, reverse=True)

    def _searched(self) -> tuple[str, ...]:
        """Every spelling of every value hidden now (computed again only when the values change)."""
        values = tuple(self.values())
        if values != self._forms[0]:
            forms = {form for value in values for form in _escaped_forms(value)}
            self._forms = (values, tuple(sorted(forms, key=len, reverse=True)))
        return self._forms[1]

    def fingerprint(self) -> int:
        """Changes whenever the set of values hidden changes (for caches of masked text)."""
        return hash(tuple(self.values()))

    def frozen(self) -> Redactor:
        """A redactor of the values hidden now, for the many texts of one listing or search."""
        self._searched()  # the spellings of the values hidden now, kept while they stay
        values = list(self._forms[0])
        frozen = Redactor(extra=lambda: values, environ={})
        frozen._forms = self._forms
        return frozen

    def spans(self, text: str, start: int = 0, end: int | None = None) -> list[Span]:
        """Where `text[start:end]` holds a secret, merged and sorted; none crosses a line break.

        Args:
            text: The whole text.
            start: First character to look at; at a line start (only a private-key block that
                opened before it is read from before it).
            end: One past the last character to look at; at a line end (default: the end).

        Returns:
            `[start, end)` spans in `text`'s own positions.
        """
        return _spans(self._searched(), text, start, len(text) if end is None else end)

    def __call__(self, text: str) -> str:
        """`text` with every secret value, and every value shown being set as a secret, masked."""
        if len(text) >= _MEMO_CHARS:  # a tool's result is masked for its event, then its request
            return _masked_long(self._searched(), text)
        return apply_masks(text, self.spans(text)) if text else text

    def lines(self, lines: Iterable[str]) -> list[str]:
        """Each line redacted (the lines are masked together, as one text)."""
        lines = list(lines)
        if not lines:
            return lines
        masked = self("\n".join(lines)).split("\n")
        return masked if len(masked) == len(lines) else [self(line) for line in lines]


def masked_interpolation(path: str, value: Any, redact: Callable[[str], str]) -> str:
    """The text `{path}` puts into an `%%agent` cell, masked: `***` when a name on the path looks
    secret (`{api_key}`, `{cfg.token}`) or the value is the environment, else `redact(str(value))`.

    Args:
        path: The dotted name written between the braces.
        value: The value it names.
        redact: Masks secret values and shapes in the value's text.

    Returns:
        The text to insert.
    """
    names = path.split(".")
    if any(looks_secret(name) for name in names) or is_secret_variable(names[0], value):
        return MASK
    return redact(str(value))
