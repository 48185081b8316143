"""What a run's input tokens are billed, with the providers' prompt caching counted.

Every provider now bills the leading part of a request that repeats an earlier one at a fraction of
the price. `PromptCacheMeter` is told each request of a run in order and prices it three ways:

- **implicit** (Gemini 2.5, OpenAI): the longest prefix identical to any earlier request of the
  run is cached when it is at least 1,024 tokens; billed at 0.25x (GPT-4.1) or 0.1x (Gemini 2.5,
  GPT-5), the rest at 1x;
- **Anthropic-style**: only prefixes ending at a `cache_control` breakpoint are written (1.25x the
  tokens after what was read), a later request reads (0.1x) the longest written prefix found at one
  of its breakpoints or up to 20 blocks before one; the rest at 1x; 1,024-token minimum.

A request is a list of blocks: the tool schemas (one block), then each message. Blocks are compared
by their content (type, text, tool calls, tool-call id), `cache_control` marks left out, as the
providers do; tokens are counted with the harness's own counter, alike for both harnesses.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from jupyter_deepagent.harness.compression.tokens import message_tokens, tools_tokens

MINIMUM = 1_024
LOOKBACK = 20
READ, WRITE = 0.1, 1.25


def _has_mark(value: Any) -> bool:
    return isinstance(value, dict) and "cache_control" in value


def _content_key(content: Any) -> Any:
    """Content as the provider compares it: a string is one text block; marks left out."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [
        {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict)
        else {"type": "text", "text": block}
        for block in content
    ]


@dataclass
class PromptCacheMeter:
    """Prices each request of one run as it comes (see the module docstring)."""

    seen: set[bytes] = field(default_factory=set)
    written: set[bytes] = field(default_factory=set)
    raw: int = 0
    implicit_cached: int = 0
    anthropic_read: int = 0
    anthropic_written: int = 0
    requests: int = 0
    _blocks: dict[int, tuple[Any, bytes, int]] = field(default_factory=dict)

    def _block(self, message: Any) -> tuple[bytes, int]:
        known = self._blocks.get(id(message))
        if known is not None and known[0] is message:
            return known[1], known[2]
        key = json.dumps(
            [
                message.type,
                _content_key(message.content),
                [(c["name"], c["args"], c.get("id")) for c in getattr(message, "tool_calls", [])],
                getattr(message, "tool_call_id", None),
            ],
            default=str,
            sort_keys=True,
        )
        digest = hashlib.blake2b(key.encode(), digest_size=16).digest()
        tokens = message_tokens(message)
        self._blocks[id(message)] = (message, digest, tokens)  # the message kept: ids stay unique
        return digest, tokens

    def add(self, tools: list[Any], messages: list[Any], *, tail_mark: bool = False) -> None:
        """Price one request: its tool schemas and messages, in order; `tail_mark` when the
        request asks the provider to cache up to its end (LangChain's `cache_control` setting)."""
        tool_key = json.dumps(
            [{k: v for k, v in t.items() if k != "cache_control"} if isinstance(t, dict) else
             str(t) for t in tools],
            default=str,
            sort_keys=True,
        )
        chain, cumulative, marks = [], [], []
        state, total = hashlib.blake2b(tool_key.encode(), digest_size=16).digest(), 0
        total += tools_tokens(tools)
        chain.append(state)
        cumulative.append(total)
        if tools and any(_has_mark(t) for t in tools):
            marks.append(0)
        for message in messages:
            digest, tokens = self._block(message)
            state = hashlib.blake2b(state + digest, digest_size=16).digest()
            total += tokens
            chain.append(state)
            cumulative.append(total)
            content = message.content
            if isinstance(content, list) and any(_has_mark(b) for b in content):
                marks.append(len(chain) - 1)
        if tail_mark:
            marks.append(len(chain) - 1)
        self.requests += 1
        self.raw += total
        cached = 0
        for position in range(len(chain) - 1, -1, -1):
            if chain[position] in self.seen:
                cached = cumulative[position]
                break
        self.implicit_cached += cached if cached >= MINIMUM else 0
        self.seen.update(chain)
        read = 0
        for mark in marks:
            for position in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if chain[position] in self.written:
                    read = max(read, cumulative[position])
                    break
        last = max(marks) if marks else -1
        write = cumulative[last] - read if last >= 0 and cumulative[last] >= MINIMUM else 0
        self.anthropic_read += read
        self.anthropic_written += max(0, write)
        for mark in marks:
            if cumulative[mark] >= MINIMUM:
                self.written.add(chain[mark])

    def figures(self) -> dict[str, float]:
        """Raw tokens, the implicit cached share, and billed-equivalent input three ways."""
        uncached = self.raw - self.implicit_cached
        anthropic_plain = self.raw - self.anthropic_read - self.anthropic_written
        return {
            "raw": self.raw,
            "cached_share": self.implicit_cached / self.raw if self.raw else 0.0,
            "billed_025": uncached + 0.25 * self.implicit_cached,
            "billed_010": uncached + 0.1 * self.implicit_cached,
            "billed_anthropic": anthropic_plain
            + READ * self.anthropic_read
            + WRITE * self.anthropic_written,
            "anthropic_read_share": self.anthropic_read / self.raw if self.raw else 0.0,
        }
