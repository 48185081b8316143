"""The main agent's words as the model writes them, for the cell to show token by token.

`AnswerStream` is a LangChain callback handler passed in the run's config. Having the two
`tap_output_*` methods makes chat models stream to it (`BaseChatModel` streams when a handler
of LangChain's streaming-handler protocol is attached), while the run itself still streams only
values and updates, so model calls stay in the kernel's main thread and the stop button works at
once. Tokens of subagents and of the summarizer are left out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import TypeVar
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage

from jupyter_deepagent.harness.run_events.event_stream import current_agent

__all__ = ["AnswerStream"]

_T = TypeVar("_T")


class AnswerStream(BaseCallbackHandler):
    """Calls `on_token(text)` for each streamed piece of a main-agent model call, and
    `on_token(None)` when a new call starts (its text replaces the previous one).

    Args:
        on_token: Receives text pieces, or None at the start of each model call.
    """

    def __init__(self, on_token: Callable[[str | None], None]) -> None:
        self.on_token = on_token
        self._runs: set[UUID] = set()

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[_T]) -> AsyncIterator[_T]:
        """Pass a stream through unchanged (the streaming-handler protocol)."""
        return output

    def tap_output_iter(self, run_id: UUID, output: Iterator[_T]) -> Iterator[_T]:
        """Pass a stream through unchanged (the streaming-handler protocol)."""
        return output

    def on_chat_model_start(
        self,
        serialized: dict[str, object],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, object] | None = None,
        **kwargs: object,
    ) -> None:
        """Follow this call if the main agent makes it (not a subagent, not the summarizer)."""
        if current_agent()[1] is not None:
            return
        if (metadata or {}).get("lc_source") == "summarization":
            return
        self._runs.add(run_id)
        self.on_token(None)

    def on_llm_new_token(self, token: object, *, run_id: UUID, **kwargs: object) -> None:
        """Forward a piece of text of a followed call."""
        if run_id not in self._runs:
            return
        if not isinstance(token, str):  # content blocks: take the chunk's text
            token = getattr(getattr(kwargs.get("chunk"), "message", None), "text", "")
        if token:
            self.on_token(str(token))

    def on_llm_end(self, response: object, *, run_id: UUID, **kwargs: object) -> None:
        """Stop following a finished call."""
        self._runs.discard(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: object) -> None:
        """Stop following a failed call."""
        self._runs.discard(run_id)
