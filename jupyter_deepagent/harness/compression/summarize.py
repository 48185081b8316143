"""Summarization: asking a model (or a callable) for one structured summary of older messages.

What the summarizer is sent is the messages as the model saw them, rendered as text (a result
already moved to a file as one line: its path, size and first line) and cut to a budget so the
summarizer's own request fits its window (the full text is in the transcript, which the prompt
names). The call goes straight to the model, not through the agent's middleware, and
is tagged `lc_source="summarization"` so a UI can hide its streamed tokens.

A summary is never empty: a model that replies without text (a tool call, say) is asked once more
for text only, and if that fails too, or a callable returns nothing, the summary is a mechanical
list of the folded messages' first lines that points to the transcript.
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Callable, Generator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from jupyter_deepagent.harness.compression.tokens import approx_tokens

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = [
    "SUMMARY_MARKER",
    "TEXT_ONLY_RETRY",
    "ModelCallReport",
    "Summarizer",
    "asummarize",
    "mechanical_summary",
    "render_message",
    "summarize",
    "summarizer_text",
]

Summarizer = Any
"""A chat model, a "provider:model" string, or a callable `(messages) -> str` (sync or async)."""

ModelCallReport = Callable[[Any, list[BaseMessage], AIMessage | None, float], None]
"""Told of each request to a chat model: `(model, messages sent, reply, seconds)`."""

SUMMARY_MARKER = "<conversation_to_summarize>"
"""Opens the conversation inside the summarization prompt (scripted models match on it)."""

_SUMMARY_PROMPT = """\
The conversation below is part of a long research session that no longer fits the context \
window. Replace it with a summary the session can continue from. Use exactly these sections:

## Session intent
What the user asked for and what the whole session is trying to achieve.

## Done and found
What was done, what was learned (facts, numbers, decisions and why), what was ruled out.

## Artifacts
Every file written, read or offloaded, by path, with one line on what it holds.

## Next steps
What remains to be done, in order.

If the conversation starts with an earlier summary, fold it in: your summary replaces it. Keep \
file paths exactly as written; anything left out can be read again from them or from {transcript}.
Reply with the summary only.

{marker}
{conversation}
</conversation_to_summarize>"""

TEXT_ONLY_RETRY = """\

Your previous reply to this request had no text. Reply again with the summary itself, as plain \
text in the sections above. Do not call any tool."""
"""Appended to the summarization prompt when the first reply had no text."""

_ROLE = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
_MIN_BLOCK = 200
_ENGLISH_CHARS_PER_TOKEN = 4.0  # the most characters a token is taken to hold when cutting
_LISTED_HEAD, _LISTED_TAIL, _LISTED_LINE = 10, 30, 160


def render_message(message: BaseMessage) -> str:
    """One message as plain text: a role line, its text, and its tool calls as JSON."""
    kind = getattr(message, "type", "message")
    head = f"[{_ROLE.get(kind, kind)}]"
    if isinstance(message, ToolMessage):
        head = f"[tool {message.name or ''} {message.tool_call_id}]".replace("  ", " ")
    elif isinstance(message, HumanMessage) and message.additional_kwargs.get("lc_source") == (
        "summarization"
    ):
        head = "[summary of the earlier conversation]"
    parts = [head, _text(message)]
    for call in getattr(message, "tool_calls", None) or ():
        args = json.dumps(call.get("args", {}), ensure_ascii=False, default=str)
        parts.append(f"-> {call.get('name')}({args}) id={call.get('id')}")
    return "\n".join(part for part in parts if part)


# The pointers compression leaves in place of a tool result (`offload.aged_pointer_text`, and the
# one `offload.offload_tool_result` writes at tool time): the size, the path, the preview.
_AGED_POINTER = re.compile(
    r"\[Already read: the result of .+? \((?P<size>[\d,]+ tokens, [\d,]+ lines)\) is in "
    r"(?P<path>\S+); read_file or grep it to see it again\.\](?:\n(?P<preview>.*))?\Z",
    re.DOTALL,
)
_OFFLOADED_POINTER = re.compile(
    r"This result was too large for the conversation\. The full result of .+? "
    r"\((?P<size>[\d,]+ tokens, [\d,]+ lines)\) is saved in (?P<path>\S+)\. Read it with "
    r"read_file\(.*?\) or search it with grep\.(?:\nFirst \d+ lines?:\n(?P<preview>.*))?\Z",
    re.DOTALL,
)


def summarizer_text(message: BaseMessage) -> str:
    """`message` as the summarizer is sent it: as `render_message`, but a tool result that is
    only a pointer to its file is one line (the path, the size and the first line of the
    preview), without the reading instructions meant for the agent.

    The folded history of a long run is mostly such pointers, each sent again to every summary
    that folds it; one line keeps what the summary's Artifacts need (the path and what the file
    holds) at about half the tokens. The transcript keeps the message as it was sent.
    """
    if isinstance(message, ToolMessage) and isinstance(message.content, str):
        text = message.content
        found = _AGED_POINTER.match(text) or _OFFLOADED_POINTER.match(text)
        if found:
            head = render_message(message).split("\n", 1)[0]
            first = (found["preview"] or "").split("\n", 1)[0][:_LISTED_LINE]
            line = f"{head} (in {found['path']}, {found['size']})"
            return f"{line}: {first}" if first.strip() else line
    return render_message(message)


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        block if isinstance(block, str) else str(block.get("text", "")) for block in content
    )


def _fit(blocks: list[str], budget_chars: int, where: str) -> list[str]:
    """Cut the longest blocks (middle out) until all of them fit `budget_chars` together."""
    if sum(len(b) for b in blocks) <= budget_chars:
        return blocks
    cap = max(_MIN_BLOCK, budget_chars // max(1, len(blocks)))
    low, high = cap, max(len(b) for b in blocks)
    while low < high:  # the largest per-block cap that still fits
        mid = (low + high + 1) // 2
        if sum(min(len(b), mid) for b in blocks) <= budget_chars:
            low = mid
        else:
            high = mid - 1
    out = []
    for block in blocks:
        if len(block) <= low:
            out.append(block)
            continue
        head, tail = low * 2 // 3, low // 3
        out.append(
            f"{block[:head]}\n[… {len(block) - head - tail:,} characters left out here; "
            f"the full text is in {where} …]\n{block[len(block) - tail :]}"
        )
    if sum(len(b) for b in out) > budget_chars and len(out) > 2:
        keep = max(1, budget_chars // (2 * (low + 200)))
        dropped = len(out) - 2 * keep
        if dropped > 0:
            note = f"[… {dropped} messages left out here; they are in {where} …]"
            out = [*out[:keep], note, *out[-keep:]]
    return out


def _chars_per_token(blocks: Sequence[str]) -> float:
    """Characters per estimated token of `blocks`, at most 4 (English prose; Chinese is about 1),
    so a budget in tokens becomes one in characters that the text fits."""
    tokens = sum(approx_tokens(block) for block in blocks)
    return min(_ENGLISH_CHARS_PER_TOKEN, sum(len(block) for block in blocks) / max(1, tokens))


def _summary_prompt_messages(
    messages: Sequence[BaseMessage], budget_tokens: int, transcript: str
) -> list[BaseMessage]:
    """The summarizer's request: the prompt with `messages` rendered and cut to `budget_tokens`."""
    rendered = [summarizer_text(m) for m in messages]
    overhead = len(_SUMMARY_PROMPT) + len(transcript) + 64
    budget_chars = max(2_000, int(budget_tokens * _chars_per_token(rendered)) - overhead)
    blocks = _fit(rendered, budget_chars, transcript)
    prompt = _SUMMARY_PROMPT.format(
        transcript=transcript, marker=SUMMARY_MARKER, conversation="\n\n".join(blocks)
    )
    return [HumanMessage(content=prompt)]


def _summary_config() -> RunnableConfig:
    """Run config for the summarizer call: its streamed tokens carry `lc_source="summarization"`."""
    metadata: dict[str, Any] = {"lc_source": "summarization"}
    try:
        from langchain.agents.middleware.internal_call_transformer import internal_call_metadata
    except ImportError:  # older LangChain: the lc_source tag alone
        pass
    else:
        metadata.update(internal_call_metadata())
    return {"metadata": metadata, "run_name": "summarization"}


def _as_text(reply: Any) -> str:
    if isinstance(reply, str):
        return reply.strip()
    if isinstance(reply, AIMessage):
        return str(reply.text).strip()
    msg = f"the summarizer must return a str or an AIMessage, got {type(reply).__name__}"
    raise TypeError(msg)


def _is_chat_model(summarizer: Any) -> bool:
    from langchain_core.language_models import BaseChatModel

    return isinstance(summarizer, BaseChatModel)


def mechanical_summary(messages: Sequence[BaseMessage], transcript: str) -> str:
    """The summary used when the summarizer gave no text: each folded message's first line.

    Long conversations keep their first and last messages, with a count of those left out.
    """
    lines = []
    for message in messages:
        head, *rest = render_message(message).splitlines()
        first = next((line.strip() for line in rest if line.strip()), "")
        if len(first) > _LISTED_LINE:
            first = first[: _LISTED_LINE - 1] + "…"
        lines.append(f"- {head} {first}".rstrip())
    if len(lines) > _LISTED_HEAD + _LISTED_TAIL:
        left_out = len(lines) - _LISTED_HEAD - _LISTED_TAIL
        lines = [
            *lines[:_LISTED_HEAD],
            f"- … {left_out} messages left out here …",
            *lines[-_LISTED_TAIL:],
        ]
    listing = "\n".join(lines) or "- (no messages)"
    return (
        "## Session intent\n"
        "The summarizer returned no text, so this is a mechanical list of the "
        f"{len(messages)} earlier messages by their first lines. Read {transcript} for what "
        "they said in full before relying on them.\n\n"
        f"## Done and found\n{listing}\n\n"
        f"## Artifacts\n- {transcript}: the full text of these messages"
    )


def _text_only(prompt: list[BaseMessage]) -> list[BaseMessage]:
    return [HumanMessage(content=str(prompt[0].content) + TEXT_ONLY_RETRY)]


def _summary_flow(
    summarizer: Summarizer,
    model: Any,
    messages: Sequence[BaseMessage],
    budget_tokens: int,
    transcript: str,
) -> Generator[tuple[Any, list[BaseMessage]], Any, tuple[str, int]]:
    """The summary, written once: yields `(who, messages)` to call, is sent the reply back."""
    if summarizer is not None and not _is_chat_model(summarizer):
        sent = sum(approx_tokens(render_message(m)) for m in messages)
        text = _as_text((yield summarizer, list(messages)))
        return text or mechanical_summary(messages, transcript), sent
    chat = summarizer or model
    prompt = _summary_prompt_messages(messages, budget_tokens, transcript)
    text = _as_text((yield chat, prompt))
    if not text:
        prompt = _text_only(prompt)
        text = _as_text((yield chat, prompt))
    sent = approx_tokens(str(prompt[0].content))
    return text or mechanical_summary(messages, transcript), sent


def summarize(
    summarizer: Summarizer,
    model: Any,
    messages: Sequence[BaseMessage],
    budget_tokens: int,
    transcript: str,
    on_call: ModelCallReport | None = None,
    call_policy: Any = None,
    step: int = 0,
) -> tuple[str, int]:
    """Summarize `messages` with `summarizer` (a chat model or callable), else with `model`.

    `on_call(model, messages, reply, seconds)` is told of every request to a chat model (the
    `model_call` event of purpose "summarize"). With `call_policy` (a `ModelCallPolicy`), a
    chat model's call that fails with a transient error is sent again, each retry a
    `model_retry` event of purpose "summarize" at `step`.

    Returns:
        The summary text (never empty, see the module docstring) and the approximate tokens
        sent to the summarizer in its last request.

    Raises:
        TypeError: a callable summarizer returned something other than text, or is async.
        Exception: the summarizer's model call failed (after its retries).
    """
    if inspect.iscoroutinefunction(summarizer):
        msg = "this summarizer is async: run the agent with ainvoke/astream"
        raise TypeError(msg)
    flow = _summary_flow(summarizer, model, messages, budget_tokens, transcript)
    try:
        who, prompt = next(flow)
        while True:
            started = time.perf_counter()
            if call_policy is not None and _is_chat_model(who):
                from jupyter_deepagent.harness.models.retry import call_with_retries

                reply = call_with_retries(
                    partial(_call, who, prompt),
                    call_policy,
                    model=who,
                    step=step,
                    purpose="summarize",
                )
            else:
                reply = _call(who, prompt)
            _report(on_call, who, prompt, reply, time.perf_counter() - started)
            who, prompt = flow.send(reply)
    except StopIteration as done:
        return done.value


async def asummarize(
    summarizer: Summarizer,
    model: Any,
    messages: Sequence[BaseMessage],
    budget_tokens: int,
    transcript: str,
    on_call: ModelCallReport | None = None,
    call_policy: Any = None,
    step: int = 0,
) -> tuple[str, int]:
    """Async twin of `summarize`: awaits an async callable or the model's `ainvoke`.

    Raises:
        TypeError: a callable summarizer returned something other than text.
        Exception: the summarizer's model call failed (after its retries).
    """
    flow = _summary_flow(summarizer, model, messages, budget_tokens, transcript)
    try:
        who, prompt = next(flow)
        while True:
            started = time.perf_counter()
            if call_policy is not None and _is_chat_model(who):
                from jupyter_deepagent.harness.models.retry import acall_with_retries

                reply = await acall_with_retries(
                    partial(_acall, who, prompt),
                    call_policy,
                    model=who,
                    step=step,
                    purpose="summarize",
                )
            else:
                reply = await _acall(who, prompt)
            _report(on_call, who, prompt, reply, time.perf_counter() - started)
            who, prompt = flow.send(reply)
    except StopIteration as done:
        return done.value


def _report(
    on_call: ModelCallReport | None,
    who: Any,
    prompt: list[BaseMessage],
    reply: Any,
    seconds: float,
) -> None:
    """Tell `on_call` about a request to a chat model (a callable summarizer is not one)."""
    if on_call is not None and _is_chat_model(who):
        on_call(who, prompt, reply if isinstance(reply, AIMessage) else None, seconds)


def _call(summarizer: Any, messages: list[BaseMessage]) -> Any:
    from langchain_core.runnables import Runnable

    if isinstance(summarizer, Runnable):
        return summarizer.invoke(messages, config=_summary_config())
    return summarizer(messages)


async def _acall(summarizer: Any, messages: list[BaseMessage]) -> Any:
    from langchain_core.runnables import Runnable

    if isinstance(summarizer, Runnable):
        return await summarizer.ainvoke(messages, config=_summary_config())
    reply = summarizer(messages)
    return await reply if inspect.isawaitable(reply) else reply
