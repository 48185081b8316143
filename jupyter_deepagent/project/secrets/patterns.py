"""Where secrets show in text by their shape or their context, found in linear time.

Two kinds of rule, each a compiled regular expression:

- **Shapes** of well-known credentials (the prefixes gitleaks and detect-secrets look for): AWS
  access key ids (`AKIA...`), Google API keys (`AIza...`) and OAuth tokens, GitHub (`ghp_...`,
  `github_pat_...`), GitLab, Slack (`xox...`), OpenAI/Anthropic-style `sk-...`, Stripe, Hugging
  Face, npm and PyPI tokens, JWTs, `Bearer ...` / `Authorization: ...` values, the password of
  `scheme://user:password@host` URLs, and private-key blocks (`-----BEGIN ... PRIVATE KEY-----`).
- **Contexts** that set a secret: `%env NAME=value`, `os.environ["NAME"] = "value"`,
  `name = "value"`, `"name": "value"`, `NAME=value` and `name: value` where the name looks
  secret, and `--context key=value`.

Why not a library: `detect-secrets` (the well-kept choice) scans 2,000 ordinary lines in about
5 s on the reference machine (2.7 ms a line, its plugins run in Python per line), reports whole
DNA sequences and long words as "high entropy" secrets, and gives values, not positions. Masking
runs on every text the agent reads, so it must cost about what one regex pass costs.

Every rule runs in time linear in the text: each pattern starts where a word starts (a
look-behind refuses positions inside a word, so a 40,000-character word is tried once, not
40,000 times), repeats are possessive or atomic (no backtracking into them) and bounded, and no
rule crosses a line break except the private-key block, which is found by plain `str.find`.
So masking one line never depends on another line, except inside a key block; `spans` takes the
block state from the text before `start`, so a page of a huge text is masked alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from jupyter_deepagent.project.secrets._presence import CharacterPresence

__all__ = ["Span", "pattern_spans"]

Span = tuple[int, int]
"""A `[start, end)` range of characters to mask."""

_WORD_START = r"(?<![A-Za-z0-9_\-])"
_VALUE_CHARS = r"[^\s\"'`,;:=()\[\]{}<>]"
_JSON_QUOTED_CHAR = r"""(?:[^"\\\r\n]|\\[^"\\\r\n]|\\\\(?:\\["\\]|[^"\\\r\n]|\\[^"\\\r\n]))"""
"""One character of a double-quoted Python string as a notebook file holds it, inside the JSON
string of a cell's source (where its quotes are written `\\"`): neither a quote nor a backslash,
an escape other than a quote's, or an escaped backslash and the character it escapes."""


@dataclass(frozen=True)
class _Rule:
    """A pattern, the group to mask, literals one of which must be in the text for it to apply,
    and, for context rules, the group holding a name that must look secret."""

    pattern: re.Pattern[str]
    group: int | str
    gates: tuple[str, ...] = ()
    name_group: int | str | None = None


def _shape(pattern: str, *gates: str, group: int = 0) -> _Rule:
    """A rule that matches only where a word starts (so `task-force...` is no `sk-` key, and
    the starts inside one long run of letters are refused at once)."""
    return _Rule(re.compile(_WORD_START + pattern), group, gates)


_SHAPES = (
    _shape(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])", "AKIA", "ASIA", "ABIA", "ACCA"),
    _shape(r"AIza[0-9A-Za-z_\-]{30,100}+", "AIza"),
    _shape(r"ya29\.[0-9A-Za-z_\-]{20,2048}+", "ya29."),
    _shape(r"GOCSPX-[0-9A-Za-z_\-]{20,100}+", "GOCSPX-"),
    _shape(r"gh[pousr]_[0-9A-Za-z]{30,255}+", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _shape(r"github_pat_[0-9A-Za-z_]{22,255}+", "github_pat_"),
    _shape(r"glpat-[0-9A-Za-z_\-]{20,255}+", "glpat-"),
    _shape(r"xox[abposre]-[0-9A-Za-z\-]{10,255}+", "xox"),
    _shape(r"sk-[A-Za-z0-9_\-]{20,255}+", "sk-"),
    _shape(r"[rs]k_(?:live|test)_[0-9A-Za-z]{10,255}+", "k_live_", "k_test_"),
    _shape(r"hf_[A-Za-z0-9]{30,100}+", "hf_"),
    _shape(r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", "npm_"),
    _shape(r"pypi-AgE[A-Za-z0-9_\-]{50,}+", "pypi-AgE"),
    _shape(
        r"eyJ[A-Za-z0-9_\-]{4,8192}+\.eyJ[A-Za-z0-9_\-]{4,8192}+\.[A-Za-z0-9_\-]{0,8192}+", "eyJ"
    ),
    _shape(
        r"(?i:bearer)[ \t]+([A-Za-z0-9\-._~+/]{8,4096}+=*)",
        "earer",
        "EARER",
        group=1,
    ),
    _shape(
        r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?i:basic|digest|token|bearer)[ \t]+)?"
        r"([^\s\"',;:=]{6,4096}+=*)",
        "uthorization",
        "UTHORIZATION",
        group=1,
    ),
    _shape(
        r"[A-Za-z][A-Za-z0-9+.]{0,30}+://[^\s:/@\"'<>]{1,256}+:([^\s/@\"'<>]{1,256}+)@",
        "://",
        group=1,
    ),
)

_CONTEXTS = (
    # %env NAME=value, %set_env NAME value, env: NAME=value
    _Rule(
        re.compile(
            r"(?:%|!)?(?:set_)?env:?[ \t]+([A-Za-z_][A-Za-z0-9_]*+)(?:[ \t]*=[ \t]*|[ \t]+)"
            r"""([^\s'"]\S{0,4096}+|'[^'\r\n]{0,4096}+'|"[^"\r\n]{0,4096}+")"""
        ),
        2,
        ("env",),
        name_group=1,
    ),
    # os.environ["NAME"] = "value", os.environ.setdefault("NAME", "value"), and a default:
    # os.environ.get("NAME", "value"), os.getenv("NAME", "value")
    _Rule(
        re.compile(
            r"""(?:environ(?:\.setdefault\(|\.get\(|\[)|getenv\()[ \t]*"""
            r"""["']([A-Za-z_][A-Za-z0-9_]*+)["'][ \t]*"""
            r"""(?:\][ \t]*=|,)[ \t]*(["'])([^"'\r\n]{1,4096}+)\2"""
        ),
        3,
        ("environ", "getenv"),
        name_group=1,
    ),
    # the same inside a JSON string, a notebook file's cell source: os.environ[\"NAME\"] = \"value\"
    _Rule(
        re.compile(
            r"""(?:environ(?:\.setdefault\(|\.get\(|\[)|getenv\()[ \t]*"""
            r"""\\"([A-Za-z_][A-Za-z0-9_]*+)\\"[ \t]*(?:\][ \t]*=|,)[ \t]*"""
            r"""\\"(""" + _JSON_QUOTED_CHAR + r"""{1,4096}+)\\\""""
        ),
        2,
        ("environ", "getenv"),
        name_group=1,
    ),
    # --context key=value (every --context value is for tools only)
    _Rule(
        re.compile(
            r"""--context(?:[ \t]+|=)["']?[^\s="']{1,256}+="""
            r"""([^\s'"]\S{0,4096}+|'[^'\r\n]{0,4096}+'|"[^"\r\n]{0,4096}+")"""
        ),
        1,
        ("--context",),
    ),
)

_SECRET_WORDS = ("key", "token", "secret", "pass", "pwd", "auth", "credential", "private")
_SECRET_WORD_ANY_CASE = re.compile("|".join(_SECRET_WORDS), re.IGNORECASE)
_WORD = re.compile(r"[\w\-]*+")
_LONGEST_NAME = 128
_ANNOTATION = r"[A-Za-z_][\w.]{0,80}+(?:\[[\w.\[\], |]{0,80}?\]++)?"
"""A Python type: a name, maybe subscripted (`str`, `Final[str]`, `dict[str, list[int]]`); no
comma outside its brackets, so `def f(key: str, model = "x")` is not `key`'s annotation."""
_ASSIGNED = re.compile(
    # `=` or `:`, or a Python annotation then `=` (`API_KEY: str = "..."`, `: str | None =`),
    # then the value: quoted (triple-quoted too, with a Python string prefix: `b"..."`, not an
    # f-string, a template rather than a value), or bare
    # (white space may be a JSON string's `\t`, in a notebook file's cell source)
    r"(?:[ \t]|\\t)*+(?::[ \t]*+" + _ANNOTATION + r"(?:[ \t]*+\|[ \t]*+" + _ANNOTATION + r"){0,4}"
    r"[ \t]*+=|[:=])(?:[ \t]|\\t)*+(?:[bBrRuU]{1,2}(?=\\?[\"']))?"
    r"(?:\"\"\"(?P<triple>[^\"\r\n]{1,4096}+)\"\"\"|'''(?P<tsingle>[^'\r\n]{1,4096}+)'''"
    r"|\"(?P<double>(?:[^\"\\\r\n]|\\[^\r\n]){1,4096}+)\""
    # single-quoted: first as a JSON string holds it, where the value's own `\'` is `\\'` (where
    # both read the value, this one reads the longer)
    r"|'(?P<jsingle>(?:[^'\\\r\n]|\\\\'|\\[^\r\n]){1,4096}+)'"
    r"|'(?P<single>(?:[^'\\\r\n]|\\[^\r\n]){1,4096}+)'"
    # double-quoted, triple too, inside a JSON string (a notebook's source: `"KEY = \\"...\\"\\n"`)
    r"|\\\"\\\"\\\"(?P<jtriple>(?:[^\"\\\r\n]|\\[^\"\r\n]){1,4096}+)\\\"\\\"\\\""
    r"|\\\"(?P<escaped>" + _JSON_QUOTED_CHAR + r"{1,4096}+)\\\""
    r"|(?![\"'])(?P<bare>(?:(?i:bearer|basic|token)[ \t]+)?" + _VALUE_CHARS + r"{1,4096}+=*)"
    r"(?![^\s,;]))"
)


_VALUE_GROUPS = ("triple", "tsingle", "double", "jsingle", "single", "jtriple", "escaped", "bare")


def _word_end(text: str, start: int, end: int) -> int:
    """Where the name characters (`\\w` and `-`) that begin at `start` end (before `end`)."""
    word = _WORD.match(text, start, end)
    return word.end() if word is not None else start


def _word_hits(lowered: str) -> list[Span]:
    """Where each secret word occurs in `lowered`, in order: one plain search per word (several
    times faster than one search for any of them, which tries every position), none for a word
    with a letter `lowered` lacks."""
    hits: list[Span] = []
    presence = CharacterPresence(lowered)
    for word in _SECRET_WORDS:
        at = presence.find(word)
        while at != -1:
            hits.append((at, at + len(word)))
            at = lowered.find(word, at + len(word))
    hits.sort()
    return hits


_PASSWORD_WORDS = ("PASSWORD", "PASSWD", "PASS", "PWD", "SECRET", "PASSPHRASE")
_NAME_WORDS = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


def _bare_minimum(name: str) -> int:
    """The shortest unquoted value masked after `name`: 4 characters after a name ending in a
    password word (`DB_PASSWORD=hunter2`: a short password is only masked here, by its name),
    8 after any other secret name (`sort_key=name`, `auth_mode=basic` are not secrets)."""
    words = [word for word in _NAME_WORDS.split(name) if word]
    return 4 if words and words[-1].upper() in _PASSWORD_WORDS else 8


def _assignment_spans(
    text: str, start: int, end: int, is_secret: Callable[[str], bool]
) -> list[Span]:
    """Values given to secret-named keys: `name = "value"`, `"name": "value"`, `NAME=value`,
    `name: value`, `X-Api-Key: value` (a bare value needs 8 characters, 4 after a password
    name, and not only digits).

    The secret words are found first (in a lower-cased copy, by a plain search); each word
    around a hit is then looked at once, so the cost is linear however the words run.
    """
    lowered = text[start:end].lower()
    if len(lowered) == end - start:
        hits = _word_hits(lowered)
    else:  # lower-casing changed the length (rare letters): search the text itself
        hits = [(m.start(), m.end()) for m in _SECRET_WORD_ANY_CASE.finditer(text, start, end)]
        hits = [(a - start, b - start) for a, b in hits]
    shift = start
    found: list[Span] = []
    position = 0
    for hit_start, hit_end in hits:
        if hit_start < position:
            continue
        word_end = _word_end(text, hit_start + shift, end)
        position = max(word_end - shift, hit_end)
        at = hit_start + shift
        before = text[max(start, at - _LONGEST_NAME - 1) : at][::-1]
        word_start = at - _word_end(before, 0, len(before))
        if word_end - word_start > _LONGEST_NAME:
            continue
        name_end = word_end
        quote = text[word_start - 1] if word_start > start else ""
        if quote in ("'", '"') and text.startswith(quote, word_end):
            name_end += 1
        elif (
            quote == '"'
            and text[word_start - 2 : word_start] == '\\"'
            and text.startswith('\\"', word_end)
        ):  # a quoted name inside a JSON string (a notebook's source: `{\\"password\\": ...}`)
            name_end += 2
        value = _ASSIGNED.match(text, name_end, end)
        if value is None or not is_secret(text[word_start:word_end]):
            continue
        group = next(g for g in _VALUE_GROUPS if value.group(g) is not None)
        shown = value.group(group)
        if group == "bare" and (
            len(shown) < _bare_minimum(text[word_start:word_end]) or shown.isdigit()
        ):  # `token_count = 12`, `sort_key=name`
            continue
        found.append((value.start(group), value.end(group)))
    return found


_KEY_BLOCK_START = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_BLOCK_END = re.compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]*|[A-Za-z-]+:.*")


def _rule_spans(
    rule: _Rule,
    text: str,
    start: int,
    end: int,
    is_secret: Callable[[str], bool],
    presence: CharacterPresence,
) -> list[Span]:
    if rule.gates and all(presence.find(gate) == -1 for gate in rule.gates):
        return []
    found: list[Span] = []
    for match in rule.pattern.finditer(text, start, end):
        if rule.name_group is not None and not is_secret(match.group(rule.name_group)):
            continue
        group = rule.group
        if match.start(group) < match.end(group):
            found.append((match.start(group), match.end(group)))
    return found


def _line_spans(text: str, start: int, end: int) -> list[Span]:
    """Each line of `[start, end)` as its own span (line breaks stay, so line numbers do)."""
    spans = []
    position = start
    while position < end:
        stop = text.find("\n", position, end)
        stop = end if stop == -1 else stop
        if stop > position:
            spans.append((position, stop))
        position = stop + 1
    return spans


def _key_block_spans(text: str, start: int, end: int) -> list[Span]:
    """Private-key blocks overlapping `[start, end)`, marker lines included, line by line."""
    spans: list[Span] = []
    position = start
    opened = text.rfind("-----BEGIN", 0, start)
    if opened != -1 and _KEY_BLOCK_START.match(text, opened):
        closed = _KEY_BLOCK_END.search(text, opened)
        if closed is None or closed.end() > start:
            position = opened  # the page starts inside a block
    while position < end:
        begin = _KEY_BLOCK_START.search(text, position, end)
        if begin is None:
            break
        closed = _KEY_BLOCK_END.search(text, begin.end())
        if closed is not None:
            stop = closed.end()
        else:  # no end marker: the body lines that follow
            stop = text.find("\n", begin.end())
            while stop != -1:
                after = text.find("\n", stop + 1)
                line = text[stop + 1 : after if after != -1 else len(text)].strip()
                if not line or not _KEY_BODY_LINE.fullmatch(line):
                    break
                stop = after
            stop = len(text) if stop == -1 else stop
        line_start = text.rfind("\n", 0, begin.start()) + 1
        spans += _line_spans(text, max(line_start, start), min(stop, end))
        position = max(stop, begin.end())
    return spans


def pattern_spans(
    text: str,
    is_secret: Callable[[str], bool],
    start: int = 0,
    end: int | None = None,
    presence: CharacterPresence | None = None,
) -> list[Span]:
    """Spans of `text[start:end]` that hold a secret by shape or by context (unsorted).

    Args:
        text: The whole text (only `[start, end)` is searched; `start` and `end` should lie at
            line boundaries).
        is_secret: Tells whether a variable name looks secret (for the context rules).
        start: First character searched.
        end: One past the last character searched (default: the end).
        presence: The characters of `text[start:end]`, if the caller has them already (it
            searches more literals in the same text).

    Returns:
        `[start, end)` spans, possibly overlapping; none crosses a line break.
    """
    end = len(text) if end is None else end
    if presence is None:
        presence = CharacterPresence(text, start, end)
    spans: list[Span] = []
    for rule in (*_SHAPES, *_CONTEXTS):
        spans += _rule_spans(rule, text, start, end, is_secret, presence)
    spans += _assignment_spans(text, start, end, is_secret)
    if presence.find("PRIVATE KEY") != -1 or text.find("PRIVATE KEY", 0, start) != -1:
        spans += _key_block_spans(text, start, end)
    return spans
