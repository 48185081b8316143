"""Token accounting: how much of the context window a text, a message list or a tool schema takes.

Counts are estimates made before any provider reply, by script: real tokenizers (byte-level BPE
such as cl100k or o200k) give an English word about one token, a Chinese character one or more,
a group of up to three digits one, and most punctuation a token of its own, so a count of four
characters per token is fair for English and four times low for Chinese. `approx_tokens` counts
letters, words, digit groups, punctuation runs, line starts and each CJK, kana, hangul or other
non-ASCII character with weights measured against cl100k on English prose, Chinese prose, Python,
JSON and CSV (each kind within about 10% on the whole, a short text within 25%), in a few passes of
`bytes.translate`, `bytes.count` and integer bit counts over the text's UTF-8 (a long text is counted on evenly spread
windows). No tokenizer is loaded: the count is the same in every install, so a research log
replays anywhere (a pointer message states the tokens it replaced), and the model's own
tokenizer is rarely cl100k anyway. When a provider reports real usage (`usage_metadata` on its last reply), the
compression layer scales the estimate up with `calibration_factor`, so it never trusts a count it
knows is low.

The context window comes, in order, from `context_window=` on `create_research_agent`, from the
model's profile (`max_input_tokens`), or from `DEFAULT_CONTEXT_WINDOW` with a warning event; a
provider's context-overflow error teaches the harness a smaller window ("learned").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "MAX_CALIBRATION",
    "ContextWindow",
    "approx_tokens",
    "calibration_factor",
    "head_within",
    "message_tokens",
    "messages_tokens",
    "request_tokens",
    "resolve_context_window",
    "tools_tokens",
    "written_tokens",
]

DEFAULT_CONTEXT_WINDOW = 200_000
"""Window assumed for a model whose profile has no `max_input_tokens`: summarization then starts at
170,000 tokens (85%). A warning event says so; pass `context_window=` to set the real one."""

MAX_CALIBRATION: Final = 3.0
"""The most `calibration_factor` scales the estimate by. Against cl100k the estimate needs at most
1.4x (its lowest, German prose, is 0.72 of the real count; English, Chinese, Python, JSON and CSV
need 1.25x at most), so 3x leaves room for tokenizers less efficient than cl100k (a byte-fallback
vocabulary spends two or three tokens on a Chinese character), while one odd report cannot
stall a run."""

_MESSAGE_OVERHEAD = 4  # role markers and separators each message costs
_SCHEMA_CACHE: dict[tuple[Any, ...], int] = {}
_SCHEMA_CACHE_SIZE = 1024

WindowSource = Literal["option", "profile", "default", "learned"]


def _ascii_table(test: Callable[[str], bool]) -> bytes:
    """A `bytes.translate` table: 1 for each ASCII byte `test` accepts, 0 for every other byte."""
    return bytes(1 if byte < 0x80 and test(chr(byte)) else 0 for byte in range(256))


_LETTERS: Final = _ascii_table(str.isalpha)
_DIGITS: Final = _ascii_table(str.isdigit)
_PUNCT: Final = _ascii_table(lambda c: not c.isalnum() and not c.isspace())
# One map for the three classes, a bit each (letters 1, digits 2, punctuation 4): read as one
# integer, a byte's bits say its classes and the bits the byte before lacks say where runs start.
_CLASS_BITS: Final = bytes(
    _LETTERS[byte] | _DIGITS[byte] << 1 | _PUNCT[byte] << 2 for byte in range(256)
)
_MOST_BYTES: Final = 4 * 32_768  # the UTF-8 of the longest text counted whole
_ONES: Final = int.from_bytes(b"\x01" * _MOST_BYTES, "little")  # 0x0101...01
_CLASS_MASKS: Final = tuple(_ONES << bit for bit in range(3))
"""Each class's bit in every byte of the longest text counted whole: `marks & mask` costs the
length of `marks` only."""


def _all_but(keep: Callable[[int], bool]) -> bytes:
    """The bytes to delete so that only those `keep` accepts are left (their count = the length)."""
    return bytes(byte for byte in range(256) if not keep(byte))


# Lead bytes of UTF-8 sequences: each stands for one non-ASCII character.
_HAN: Final = _all_but(lambda b: 0xE4 <= b <= 0xE9)  # U+4000-9FFF: the CJK ideographs
_HANGUL: Final = _all_but(lambda b: 0xEA <= b <= 0xED)  # U+A000-DFFF: hangul syllables, mostly
_OTHER_3: Final = _all_but(lambda b: 0xE0 <= b <= 0xE3 or 0xEE <= b <= 0xEF)  # kana, CJK and
# general punctuation, fullwidth forms, symbols
_TWO_BYTE: Final = _all_but(lambda b: 0xC2 <= b <= 0xDF)  # accented Latin, Greek, Cyrillic, Arabic
_FOUR_BYTE: Final = _all_but(lambda b: b >= 0xF0)  # emoji and rare ideographs

# Tokens per feature, measured against cl100k (see the module docstring).
_PER_LETTER, _PER_WORD = 0.11, 0.6  # a short word ~1 token, a long identifier more
_PER_DIGIT, _PER_NUMBER = 0.34, 0.8  # digits go in groups of up to three
_PER_PUNCT, _PER_PUNCT_RUN = 0.25, 0.35  # `", "` or `"},{"` merge; most marks are one token
_PER_NEWLINE, _PER_INDENT = 0.9, 1.0  # a line break, a run of spaces starting a line
_PER_HAN, _PER_HANGUL, _PER_OTHER_3 = 1.2, 1.3, 1.0
_PER_TWO_BYTE, _PER_FOUR_BYTE = 0.5, 3.0

_WHOLE_LIMIT: Final = _MOST_BYTES // 4  # characters counted whole; longer: counted on windows
_WINDOWS: Final = 64  # many, so a text that mixes scripts in long stretches is counted as it is
_WINDOW: Final = 256
_REMEMBERED_FROM: Final = 1_024  # characters: shorter texts are counted again, it costs less
_COUNTS: dict[tuple[int, int], int] = {}
"""(hash, length) of a long text -> its count. A tool result is counted when it arrives, when the
request carrying it is built, and when it ages to a file; remembering by hash keeps no text alive
(two texts alike in both would share a count: a one-in-2**64 miss of an estimate)."""
_COUNTS_SIZE: Final = 8_192


_SHORT: Final = 256  # bytes: below, a pass per count costs less than the integer operations
_RUN_START: Final = b"\x00\x01"  # in a 0/1 map, where each run of 1s starts (bar the first)

_Counts = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]


def _class_counts(data: bytes) -> _Counts:
    """(bytes, runs) of letters, of digits and of punctuation in `data`: a long text read as one
    integer, a bit per class in each byte, so each count is one integer operation."""
    if len(data) < _SHORT:
        return _runs(data, _LETTERS), _runs(data, _DIGITS), _runs(data, _PUNCT)
    if len(data) > _MOST_BYTES:
        msg = f"{len(data):,} bytes is more than the {_MOST_BYTES:,} counted whole"
        raise ValueError(msg)
    marks = int.from_bytes(data.translate(_CLASS_BITS), "little")
    starts = (marks ^ (marks << 8)) & marks  # each class bit set where the byte before lacks it
    letters, digits, punct = (
        ((marks & mask).bit_count(), (starts & mask).bit_count()) for mask in _CLASS_MASKS
    )
    return letters, digits, punct


def _runs(data: bytes, table: bytes) -> tuple[int, int]:
    """How many bytes of the class `table` marks, and how many runs they form (a short text)."""
    marks = data.translate(table)
    return marks.count(b"\x01"), marks.count(_RUN_START) + (marks[:1] == b"\x01")


def _estimate(text: str) -> float:
    data = text.encode("utf-8", "surrogatepass")
    (letters, words), (digits, numbers), (punct, punct_runs) = _class_counts(data)
    total = (
        _PER_LETTER * letters
        + _PER_WORD * words
        + _PER_DIGIT * digits
        + _PER_NUMBER * numbers
        + _PER_PUNCT * punct
        + _PER_PUNCT_RUN * punct_runs
        + _PER_NEWLINE * data.count(b"\n")
        + _PER_INDENT * data.count(b"\n ")
    )
    if len(data) != len(text):  # some characters are not ASCII
        total += (
            _PER_HAN * len(data.translate(None, _HAN))
            + _PER_HANGUL * len(data.translate(None, _HANGUL))
            + _PER_OTHER_3 * len(data.translate(None, _OTHER_3))
            + _PER_TWO_BYTE * len(data.translate(None, _TWO_BYTE))
            + _PER_FOUR_BYTE * len(data.translate(None, _FOUR_BYTE))
        )
    return total


def _count(text: str) -> int:
    """The estimate of a non-empty text: whole, or on windows past `_WHOLE_LIMIT` characters."""
    if len(text) <= _WHOLE_LIMIT:
        return max(1, round(_estimate(text)))
    step = (len(text) - _WINDOW) / (_WINDOWS - 1)
    starts = [int(i * step) for i in range(_WINDOWS)]
    sampled = _estimate("".join(text[start : start + _WINDOW] for start in starts))
    return max(1, round(sampled * len(text) / (_WINDOWS * _WINDOW)))


def approx_tokens(text: str) -> int:
    """Estimated tokens of a text, script-aware (see the module docstring); 0 for no text.

    A text over 32,768 characters is counted on 64 evenly spread windows of 256 characters and
    scaled to its length, so a count costs the same for any longer text.
    """
    if not text:
        return 0
    if len(text) < _REMEMBERED_FROM:
        return _count(text)
    key = (hash(text), len(text))
    tokens = _COUNTS.get(key)
    if tokens is None:
        tokens = _count(text)
        if len(_COUNTS) >= _COUNTS_SIZE:
            _COUNTS.clear()
        _COUNTS[key] = tokens
    return tokens


def head_within(text: str, tokens: int) -> str:
    """The longest start of `text` (to a character) estimated at no more than `tokens` tokens."""
    if tokens <= 0:
        return ""
    if approx_tokens(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the estimate grows with the prefix, give or take a rounding
        middle = (low + high + 1) // 2
        if _count(text[:middle]) <= tokens:  # not cached: the prefixes are used once
            low = middle
        else:
            high = middle - 1
    return text[:low]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                parts.append(str(block.get("text") or block.get("content") or ""))
        return "".join(parts)
    return str(content)


def _tool_calls(message: Any) -> Any:
    """A message's tool calls (None for a kind without them): read from its fields, since asking
    a pydantic message for a field its kind lacks costs microseconds (an exception inside)."""
    fields = getattr(message, "__dict__", None)
    if fields is not None and "content" in fields:  # a LangChain message: its fields are here
        return fields.get("tool_calls")
    return getattr(message, "tool_calls", None)


def message_tokens(message: Any) -> int:
    """Approximate tokens of one LangChain message: its text, its tool calls' arguments, overhead."""
    return written_tokens(message) + _MESSAGE_OVERHEAD


def written_tokens(message: Any) -> int:
    """Approximate tokens of a message's text and tool calls alone: what a model writes for a
    reply (its output tokens), without the overhead the message adds to a request."""
    total = approx_tokens(_content_text(getattr(message, "content", message)))
    for call in _tool_calls(message) or ():
        total += approx_tokens(call.get("name", "")) + approx_tokens(
            json.dumps(call.get("args", {}), ensure_ascii=False, default=str)
        )
    return total


def messages_tokens(messages: Iterable[Any]) -> int:
    """Approximate tokens of a message list."""
    return sum(message_tokens(m) for m in messages)


def _schema_key(tool: Any) -> tuple[Any, ...] | None:
    if isinstance(tool, dict):
        return None
    return (
        type(tool),
        getattr(tool, "name", None),
        getattr(tool, "description", None),
        id(getattr(tool, "args_schema", None)),
    )


def tools_tokens(tools: Sequence[Any]) -> int:
    """Approximate tokens the tool schemas add to a request (schemas are cached per tool)."""
    if not tools:
        return 0
    from langchain_core.utils.function_calling import convert_to_openai_tool

    total = 0
    for tool in tools:
        key = _schema_key(tool)
        cached = _SCHEMA_CACHE.get(key) if key is not None else None
        if cached is None:
            schema = tool if isinstance(tool, dict) else convert_to_openai_tool(tool)
            cached = approx_tokens(json.dumps(schema, ensure_ascii=False, default=str))
            if key is not None:
                if len(_SCHEMA_CACHE) >= _SCHEMA_CACHE_SIZE:
                    _SCHEMA_CACHE.clear()
                _SCHEMA_CACHE[key] = cached
        total += cached
    return total


def request_tokens(system: Any, messages: Iterable[Any], tools: Sequence[Any] = ()) -> int:
    """Approximate tokens of one model request: system message, messages and tool schemas."""
    head = message_tokens(system) if system is not None else 0
    return head + messages_tokens(messages) + tools_tokens(tools)


@dataclass(frozen=True)
class ContextWindow:
    """A model's input limit in tokens and where the number came from."""

    tokens: int
    source: WindowSource

    def fraction(self, share: float) -> int:
        """`share` of the window, in whole tokens (at least 1)."""
        return max(1, int(self.tokens * share))


def _profile_limit(model: Any) -> int | None:
    try:
        profile = getattr(model, "profile", None)
    except Exception:
        return None
    if not isinstance(profile, Mapping):
        return None
    limit = profile.get("max_input_tokens")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None


def resolve_context_window(model: Any, context_window: int | None = None) -> ContextWindow:
    """The window to keep requests inside: the option, else the model's profile, else the default.

    Raises:
        ValueError: `context_window` is not a positive integer.
    """
    if context_window is not None:
        if isinstance(context_window, bool) or not isinstance(context_window, int):
            msg = f"context_window must be an int number of tokens, got {context_window!r}"
            raise ValueError(msg)
        if context_window <= 0:
            msg = f"context_window must be positive, got {context_window}"
            raise ValueError(msg)
        return ContextWindow(context_window, "option")
    limit = _profile_limit(model)
    if limit is not None:
        return ContextWindow(limit, "profile")
    return ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")


def calibration_factor(reported: int | None, estimated: int, previous: float = 1.0) -> float:
    """How much to scale estimated counts, given what the provider reported for a request we
    estimated at `estimated` tokens. Never below 1: a provider counting fewer tokens than the
    estimate only makes compression start a little early, while trusting a low count would
    overflow. Capped at `MAX_CALIBRATION` so one odd report cannot stall a run.
    """
    if not reported or estimated <= 0:
        return previous
    return min(MAX_CALIBRATION, max(1.0, reported / estimated))
