"""The types of what `create_research_agent` takes, named once for the modules that pass them on.

Type aliases only: each names LangChain types imported for the type checker alone, so importing
this module loads no LangChain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware, InterruptOnConfig
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.tools import BaseTool

__all__ = [
    "AgentTool",
    "ApprovalSetting",
    "Approvals",
    "ChatModelInput",
    "Middleware",
    "SummarizerInput",
]

AgentTool: TypeAlias = "BaseTool | Callable[..., object] | dict[str, object]"
"""A tool as `create_agent` takes it: a LangChain tool, a plain function or a schema dict."""

ChatModelInput: TypeAlias = "BaseChatModel | str"
"""A chat model, or a "provider:model" string the harness resolves."""

ApprovalSetting: TypeAlias = "bool | InterruptOnConfig"
"""One tool's entry of `interrupt_on`: True (ask), False (opt out) or an `InterruptOnConfig`."""

Approvals: TypeAlias = "Mapping[str, ApprovalSetting]"
"""`interrupt_on`: tool name -> its approval setting."""

Middleware: TypeAlias = "AgentMiddleware[Any, Any, Any]"
"""A LangChain agent middleware of any state, runtime context and response type."""

SummarizerInput: TypeAlias = "BaseChatModel | str | Callable[[list[BaseMessage]], object]"
"""What writes summaries: a chat model, a "provider:model" string, or a callable `(messages) ->
str` (sync, or async returning an awaitable of it)."""
