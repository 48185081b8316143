"""The folded part of a conversation: where to cut it, the transcript it goes to, and the summary
message that takes its place.

`/conversation_history/<thread>.md` is the canonical record: each summarization appends every
message it folds, in full (or, when the text already lives in a file, that file's path), followed
by the summary it produced. The summary message names the transcript and carries the active todo
list, so neither is lost when the `write_todos` call that set it is folded away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from jupyter_deepagent._exceptions import BackendError, FileNotFound
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.compression.summarize import render_message
from jupyter_deepagent.harness.compression.tokens import approx_tokens, head_within
from jupyter_deepagent.harness.files import read_text

__all__ = [
    "append_transcript",
    "find_cutoff",
    "summary_content",
    "transcript_section",
]

_TRANSCRIPT_HEADER = (
    "# Conversation history\n\n"
    "Every message folded into a summary, in order, with each summary written.\n"
)


def find_cutoff(
    kinds: Sequence[str], tokens: Sequence[int], keep_tokens: int | None, keep_messages: int
) -> int:
    """Where the kept part starts: the earliest turn start whose suffix fits `keep_tokens`
    (or, with no token budget, that keeps at least `keep_messages`). A turn starts at a non-tool
    message, so a tool call and its results stay together. At least the last turn is kept;
    0 means nothing can be folded.
    """
    starts = [i for i, kind in enumerate(kinds) if kind != "tool"]
    if not starts:
        return 0
    last_turn = starts[-1]
    if keep_tokens is None:
        target = max(0, len(kinds) - keep_messages)
        earlier = [i for i in starts if i <= target]
        return min(earlier[-1] if earlier else 0, last_turn)
    cut, suffix, position = last_turn, 0, len(kinds)
    for start in reversed(starts):
        suffix += sum(tokens[start:position])
        position = start
        if suffix > keep_tokens:
            break
        cut = start
    return cut


def transcript_section(
    number: int,
    reason: str,
    messages: Sequence[BaseMessage],
    first_index: int,
    pointers: dict[int, str],
    summary: str,
) -> str:
    """The Markdown appended to the transcript for one summarization: every folded message in
    full (or, when its text already lives in a file, the path), then the summary written.
    Line endings are normalized to `\\n`."""
    parts = [
        f"## Summarization {number} ({reason}): messages {first_index + 1} to "
        f"{first_index + len(messages)}\n"
    ]
    for offset, message in enumerate(messages):
        index = first_index + offset
        if index in pointers:
            head = render_message(message).split("\n", 1)[0]
            parts.append(f"### {index + 1}. {head}\n(full text in {pointers[index]})\n")
        else:
            parts.append(f"### {index + 1}. {render_message(message)}\n")
    parts.append(f"### Summary {number}\n{summary}\n")
    return "\n".join("\n".join(part.splitlines()) + "\n" for part in parts)


def append_transcript(
    backend: BackendProtocol, path: str, section: str, warn: Callable[[str], Any]
) -> bool:
    """Append `section` to the transcript at `path` (created with a header); False, after
    `warn(message)`, when the backend refuses."""
    try:
        existing = read_text(backend, path)
    except FileNotFound:
        existing = _TRANSCRIPT_HEADER
    except BackendError as exc:
        warn(f"Could not read {path}: {exc}")
        return False
    try:
        backend.write(path, f"{existing}\n{section}")
    except BackendError as exc:
        warn(f"Could not write {path}: {exc}")
        return False
    return True


def _todo_lines(todos: Any) -> str:
    """The active todo list as Markdown lines ("" when there is none)."""
    if not isinstance(todos, list):
        return ""
    return "\n".join(
        f"- [{todo.get('status', 'pending')}] {todo.get('content', '')}"
        for todo in todos
        if isinstance(todo, dict)
    )


def summary_content(count: int, transcript: str, summary: str, todos: Any, limit: int) -> str:
    """The text of the summary message: what it is, where the full text is, the summary (cut to
    `limit` tokens), and the active todo list."""
    if approx_tokens(summary) > limit:
        summary = (
            f"{head_within(summary, limit)}\n[… summary cut here; it is whole in {transcript}]"
        )
    content = (
        f"Summary {count} of the conversation so far. It replaces the earlier messages, whose "
        f"full text is in {transcript} (read_file or grep it for details).\n\n{summary}"
    )
    todo_text = _todo_lines(todos)
    if todo_text:
        content += f"\n\n## Active todo list (still in effect)\n{todo_text}"
    return content
