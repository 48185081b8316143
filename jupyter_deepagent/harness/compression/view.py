"""The model's view of a conversation: the checkpointed messages as they are sent, compressed.

Non-destructive: the checkpoint keeps every message. The view replaces what the model no longer
needs whole with pointers to files (consumed tool results, long human messages), cuts old
file-writing arguments, and puts a summary in place of the folded history. Each decision is
written to the compression record, so it is made once and every later request looks the same
(stable prefixes, events emitted once).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.events import AGED, INPUT_OFFLOADED, SUMMARIZED, WARNING
from jupyter_deepagent.harness.artifact_folders import HISTORY_FOLDER, LARGE_RESULTS_FOLDER
from jupyter_deepagent.harness.compression.aging import (
    ConversationIndex,
    RepliesAfter,
    plan_aging,
)
from jupyter_deepagent.harness.compression.cache_marks import mark_positions
from jupyter_deepagent.harness.compression.history import (
    append_transcript,
    find_cutoff,
    summary_content,
    transcript_section,
)
from jupyter_deepagent.harness.compression.offload import (
    Offloaded,
    aged_pointer_text,
    cut_file_arguments,
    line_count,
    long_file_writes,
    persist_text,
    pointer_text,
    safe_name,
    short_id,
)
from jupyter_deepagent.harness.compression.state import (
    CompressionRecord,
    CompressionSettings,
    SummaryRecord,
)
from jupyter_deepagent.harness.compression.tokens import (
    ContextWindow,
    approx_tokens,
    message_tokens,
)
from jupyter_deepagent.harness.compression.view_entries import (
    Build,
    Entry,
    SummaryJob,
    ViewCache,
    message_key,
)

__all__ = ["ContextView"]

AGED_PREVIEW = 1
"""Lines of an aged result shown in its pointer."""
HUMAN_PREVIEW = 10
"""Lines of an offloaded human message shown in its pointer."""
_WORTH_MOVING = 250  # tokens: a pointer with its preview costs about half of that
_TOKENS = operator.attrgetter("tokens")
_FORM = operator.attrgetter("form")


def _text(message: BaseMessage) -> str | None:
    return message.content if isinstance(message.content, str) else None


class ContextView:
    """Builds and compresses what one model request carries (see the module docstring)."""

    def __init__(
        self,
        messages: list[BaseMessage],
        *,
        overhead: int,
        record: CompressionRecord,
        settings: CompressionSettings,
        window: ContextWindow,
        backend: BackendProtocol,
        emit: Callable[..., Any],
        cache: ViewCache,
        factor: float,
        transcript: str,
    ) -> None:
        self.messages, self.overhead, self.settings = messages, overhead, settings
        self.window, self.backend, self.emit, self.cache = window, backend, emit, cache
        self.factor, self.transcript = factor, transcript
        self.pointers: dict[str, str] = dict(record.get("pointers") or {})
        self.bare: set[str] = set(record.get("bare") or ())
        self.cut_args: set[str] = set(record.get("cut_args") or ())
        self.summary: SummaryRecord | None = self._valid_summary(record.get("summary"))
        self.update: dict[str, Any] = {}
        self.changed: set[int] = set()
        """Checkpoint indices of messages this call sends differently from the last (-1: the
        summary), so the cache marks know where the request stops repeating the last one."""
        self.due: set[int] = set()
        self.newest_ages_next = False
        self.replies_after: RepliesAfter | list[int] = []
        self._raw_total: int | None = None
        self.entries = self._build()

    @property
    def entries(self) -> list[Entry]:
        """The request's messages as entries, in order (set whole or through `_replace`, so the
        request's size is summed again only after a change)."""
        return self._entries

    @entries.setter
    def entries(self, entries: list[Entry]) -> None:
        self._entries, self._raw_total = entries, None

    def _replace(self, position: int, entry: Entry) -> None:
        self._entries[position], self._raw_total = entry, None

    # -- building ---------------------------------------------------------------------------------
    def _valid_summary(self, summary: object) -> SummaryRecord | None:
        if not isinstance(summary, dict):
            return None
        cutoff = summary.get("cutoff", -1)
        if 0 < cutoff < len(self.messages):
            if message_key(self.messages[cutoff], cutoff) == summary.get("cutoff_id"):
                return cast("SummaryRecord", summary)
        for index, message in enumerate(self.messages):  # history was edited: find the cut again
            if index and message_key(message, index) == summary.get("cutoff_id"):
                return cast("SummaryRecord", {**summary, "cutoff": index})
        return None

    @property
    def start(self) -> int:
        """First checkpoint message the view carries whole or compressed (after the summary)."""
        return self.summary["cutoff"] if self.summary else 0

    def _build(self) -> list[Entry]:
        index = ConversationIndex.of(
            self.messages, self.pointers, self.cache.indexes.get(self.transcript)
        )
        self.cache.keep_index(self.transcript, index)
        plan = plan_aging(
            self.messages, self.start, index, self.cache.count, self.settings, self.window
        )
        self.due, self.replies_after = plan.due, plan.replies_after
        self.newest_ages_next = plan.newest_ages_next
        entries = [self._summary_entry(self.summary["content"])] if self.summary else []
        entries.extend(self._message_entries())
        return entries

    def _message_entries(self) -> list[Entry]:
        """The entries of messages [start, end): those of the conversation's last build whose
        inputs did not change, the others (and the new messages) built now, in index order."""
        start = self.start
        record = (self.pointers, self.bare, self.cut_args, self.settings.human_limit(self.window))
        last = self.cache.builds.get(self.transcript)
        entries, stale, kept = Build.reuse(last, self.messages, start, record, self.due)
        for index in stale:
            entries[index - start] = self._entry(index)
        entries.extend(self._entry(index) for index in range(kept, len(self.messages)))
        self.cache.keep(self.transcript, Build.of(self.messages, start, entries, record, last))
        return entries

    def _summary_entry(self, content: str) -> Entry:
        count = self.summary["count"] if self.summary else 0
        made = self.cache.summaries.get((count, content))
        if made is not None:
            return made
        message = HumanMessage(
            content=content, additional_kwargs={"lc_source": "summarization"}, id=f"summary-{count}"
        )
        entry = Entry(-1, message, message_tokens(message), "summary", "summary")
        if len(self.cache.summaries) >= 64:
            self.cache.summaries.clear()
        self.cache.summaries[(count, content)] = entry
        return entry

    def _entry(self, index: int) -> Entry:
        message = self.messages[index]
        key = message.id or f"#{index}"
        path = self.pointers.get(key)
        if path is not None:
            return self._pointer_entry(index, path, bare=key in self.bare)
        known = self.cache.whole.get(key)
        if known is not None and known[0]() is message:
            whole = Entry(index, message, known[1], known[2])
        else:
            kind = (
                "tool"
                if isinstance(message, ToolMessage)
                else ("ai" if isinstance(message, AIMessage) else "human")
            )
            whole = Entry(index, message, self.cache.count(message), kind)
            if message.id is not None:
                self.cache.remember(message, whole)
        if whole.kind == "tool":
            if index in self.due:
                return self._to_pointer(whole, "consumed") or whole
        elif whole.kind == "ai":
            calls = cast("AIMessage", message).tool_calls
            if self.cut_args and any(c.get("id") in self.cut_args for c in calls):
                return self._cut_entry(whole)
        elif whole.tokens > self.settings.human_limit(self.window):
            return self._to_pointer(whole, "size") or whole
        return whole

    # -- pointers ---------------------------------------------------------------------------------
    def _pointer_entry(
        self, index: int, path: str, *, bare: bool, offloaded: Offloaded | None = None
    ) -> Entry:
        message = self.messages[index]
        key = message_key(message, index)
        cached = self.cache.stubs.get((key, path, bare))
        if cached is not None and cached.index == index:
            return cached
        text = _text(message) or ""
        if offloaded is None or offloaded.path != path:
            offloaded = Offloaded(path, approx_tokens(text), line_count(text), len(text))
        if isinstance(message, ToolMessage):
            content = aged_pointer_text(
                offloaded, message.name or "a tool", text, 0 if bare else AGED_PREVIEW
            )
        else:
            content = pointer_text(
                offloaded, "The full message from the user", text, 0 if bare else HUMAN_PREVIEW
            )
        stub = message.model_copy(update={"content": content})
        kind = "tool" if isinstance(message, ToolMessage) else "human"
        entry = Entry(index, stub, message_tokens(stub), kind, "bare" if bare else "pointer")
        if len(self.cache.stubs) > 20_000:
            self.cache.stubs.clear()
        self.cache.stubs[(key, path, bare)] = entry
        return entry

    def _to_pointer(self, entry: Entry, reason: str) -> Entry | None:
        """Write a whole tool result or human message to its file; None if it cannot be moved."""
        message = entry.message
        key = message_key(message, entry.index)
        text = _text(message)
        if text is None or key in self.cache.failed:
            return None
        if isinstance(message, ToolMessage):
            stem = f"{safe_name(message.name or '', 'tool')}-{short_id(message.tool_call_id, text)}"
            folder = LARGE_RESULTS_FOLDER
        else:
            folder, stem = HISTORY_FOLDER, f"human-{short_id(message.id, text)}"
        try:
            offloaded = persist_text(self.backend, folder, stem, text)
        except BackendError as exc:
            self.cache.failed.add(key)
            self.emit(
                WARNING, message=f"Could not move a message to {folder}: {exc}", source=folder
            )
            return None
        self.pointers[key] = offloaded.path
        self.changed.add(entry.index)
        self.update.setdefault("pointers", {})[key] = offloaded.path
        if isinstance(message, ToolMessage):
            self.emit(
                AGED,
                path=offloaded.path,
                tool=message.name,
                tool_call_id=message.tool_call_id,
                tokens=offloaded.tokens,
                lines=offloaded.lines,
                replies=self.replies_after[entry.index],
                reason=reason,
            )
        else:
            self.emit(
                INPUT_OFFLOADED,
                kind="human",
                path=offloaded.path,
                tokens=offloaded.tokens,
                message_id=message.id,
                tool=None,
                tool_call_id=None,
            )
        return self._pointer_entry(entry.index, offloaded.path, bare=False, offloaded=offloaded)

    def _make_bare(self, entry: Entry) -> Entry:
        key = message_key(self.messages[entry.index], entry.index)
        self.changed.add(entry.index)
        self.bare.add(key)
        self.update.setdefault("bare", set()).add(key)
        return self._pointer_entry(entry.index, self.pointers[key], bare=True)

    # -- tool inputs ------------------------------------------------------------------------------
    def _cut_entry(self, entry: Entry) -> Entry:
        cut = cut_file_arguments(cast("AIMessage", entry.message), self.cut_args)
        return Entry(entry.index, cut, message_tokens(cut), "ai", "cut")

    def cut_old_arguments(self, *, everything: bool = False) -> None:
        """Send old (or, with `everything`, all) long `write_file`/`edit_file` arguments as
        pointers to the file they were applied to."""
        for position, entry in enumerate(self.entries):
            if entry.kind != "ai" or entry.form == "cut":
                continue
            if not everything and self.replies_after[entry.index] < self.settings.keep_recent_turns:
                continue
            found = long_file_writes(
                cast("AIMessage", entry.message), self.settings.tool_args_char_limit, self.cut_args
            )
            for call in found:
                call_id = cast("str", call["id"])  # the calls of a stored AI message carry ids
                self.cut_args.add(call_id)
                self.update.setdefault("cut_args", set()).add(call_id)
                self.emit(
                    INPUT_OFFLOADED,
                    kind="tool_args",
                    tool=call["name"],
                    tool_call_id=call["id"],
                    path=call.get("args", {}).get("file_path"),
                    tokens=approx_tokens(str(call.get("args", {}))),
                    message_id=None,
                )
            if found:
                self.changed.add(entry.index)
                self._replace(position, self._cut_entry(entry))

    # -- size -------------------------------------------------------------------------------------
    def total(self) -> int:
        """Tokens of the request as it stands (calibrated)."""
        return math.ceil(self.raw_total() * self.factor)

    def raw_total(self) -> int:
        """Tokens of the request as the plain approximation counts them."""
        if self._raw_total is None:
            self._raw_total = sum(map(_TOKENS, self._entries))
        return self.overhead + self._raw_total

    def shrink(self, limit: int) -> None:
        """Emergency: move the largest remaining messages to files, then cut every file-writing
        argument, then drop previews, until the request fits `limit`."""
        if self.total() <= limit:
            return
        order = sorted(range(len(self.entries)), key=lambda p: -self.entries[p].tokens)
        for position in order:
            entry = self.entries[position]
            if entry.tokens <= _WORTH_MOVING:
                break
            if entry.form == "whole" and entry.kind in ("tool", "human"):
                self._replace(position, self._to_pointer(entry, "window") or entry)
                if self.total() <= limit:
                    return
        self.cut_old_arguments(everything=True)
        for position in order:
            entry = self.entries[position]
            if entry.form == "pointer" and self.total() > limit:
                self._replace(position, self._make_bare(entry))

    def pointer_count(self) -> int:
        """How many messages the request carries as pointers to their files."""
        forms = list(map(_FORM, self.entries))
        return forms.count("pointer") + forms.count("bare")

    def cache_marks(self) -> list[int]:
        """Positions in `sent` to mark as prompt-cache breakpoints (`cache_marks.mark_positions`)."""
        return mark_positions(self.entries, self.changed, newest_ages_next=self.newest_ages_next)

    @property
    def sent(self) -> list[BaseMessage]:
        """The messages of the request, in order."""
        return [entry.message for entry in self.entries]

    # -- summarization ----------------------------------------------------------------------------
    def summary_job(self) -> SummaryJob | None:
        """What to fold to keep the recent part within `keep_fraction` of the window (or the last
        `fallback_keep_messages` with no known window); None when nothing can be folded."""
        kinds = ["human" if e.kind == "summary" else e.kind for e in self.entries]
        sizes = list(map(_TOKENS, self.entries))
        cut = find_cutoff(
            kinds,
            sizes,
            self.settings.keep_tokens(self.window),
            self.settings.fallback_keep_messages,
        )
        has_summary = bool(self.entries) and self.entries[0].kind == "summary"
        if cut <= (1 if has_summary else 0) or cut >= len(self.entries):
            return None
        first, cutoff = self.start, self.entries[cut].index
        folded = [e.message for e in self.entries[:cut]]
        return SummaryJob(cut, first, cutoff, folded, self.messages[first:cutoff], sizes[:cut])

    def apply_summary(
        self, job: SummaryJob, text: str, *, reason: str, todos: Any, summarizer_tokens: int
    ) -> None:
        """Append the folded messages to the transcript and put the summary in their place."""
        before = self.total()
        count = (self.summary["count"] if self.summary else 0) + 1
        pointers = {
            index: self.pointers[key]
            for index in range(job.first, job.cutoff)
            if (key := message_key(self.messages[index], index)) in self.pointers
        }
        section = transcript_section(count, reason, job.originals, job.first, pointers, text)
        append_transcript(
            self.backend,
            self.transcript,
            section,
            lambda problem: self.emit(WARNING, message=problem, source=self.transcript),
        )
        content = summary_content(
            count, self.transcript, text, todos, self.settings.summary_limit(self.window)
        )
        self.summary = SummaryRecord(
            content=content,
            cutoff=job.cutoff,
            count=count,
            cutoff_id=message_key(self.messages[job.cutoff], job.cutoff),
            transcript=self.transcript,
        )
        self.update["summary"] = self.summary
        self.changed.add(-1)
        self.entries = [self._summary_entry(content), *self.entries[job.cut :]]
        self.emit(
            SUMMARIZED,
            reason=reason,
            count=count,
            tokens_before=before,
            tokens_after=self.total(),
            messages_folded=job.cutoff - job.first,
            transcript_path=self.transcript,
            tokens_summary=approx_tokens(text),
            tokens_summarizer=summarizer_tokens,
        )
