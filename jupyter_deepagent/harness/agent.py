"""`create_research_agent`: a LangGraph deep agent whose whole context is inspectable data.

Built on `langchain.agents.create_agent`. Parameter names follow deepagents' `create_deep_agent`.
A subagent is a research agent too: this module builds each one and hands the runnables to the
`task` tool's middleware, which runs them (`subagents.task_tool`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypedDict, cast

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.agent_plan import (
    middleware_tools,
    needs_checkpointer,
    plan_agent,
    with_memory_budget,
)
from jupyter_deepagent.harness.approval_policy import asked_approvals, subagent_approvals
from jupyter_deepagent.harness.prompt.assembly import build_assembly
from jupyter_deepagent.harness.prompt.profile import HarnessProfile
from jupyter_deepagent.harness.prompt.sections import PromptAssembly

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.store.base import BaseStore
    from langgraph.types import Checkpointer

    from jupyter_deepagent.harness.agent_inputs import (
        AgentTool,
        Approvals,
        ChatModelInput,
        Middleware,
        SummarizerInput,
    )
    from jupyter_deepagent.harness.subagents.specs import SubAgentSpec

__all__ = ["assemble_prompt", "create_research_agent"]


# Arguments of create_research_agent that do not change the system prompt.
_PROMPT_NEUTRAL_ARGUMENTS = frozenset(
    {
        "store",
        "checkpointer",
        "context_schema",
        "state_schema",
        "name",
        "response_format",
        "max_parallel_subagents",
        "context_window",
        "offload_token_limit",
        "summarizer",
        "compaction_tool",
        "age_token_limit",
        "keep_recent_turns",
        "model_timeout",
        "model_retries",
        "model_retry_wait",
        "budget_pauses",
    }
)


def assemble_prompt(
    model: ChatModelInput | None = None,
    tools: Sequence[AgentTool] = (),
    *,
    system_prompt: str | None = None,
    memory: Sequence[str] = (),
    skills: Sequence[str] = (),
    subagents: Sequence[object] = (),
    backend: BackendProtocol | None = None,
    interrupt_on: Approvals | None = None,
    profile: HarnessProfile | None = None,
    middleware: Sequence[Middleware] = (),
    **other: object,
) -> PromptAssembly:
    """The system prompt `create_research_agent` with the same arguments would send, without
    running anything. Memory and skills are read from `backend` as it is now; the text your
    middleware add is found by running their `wrap_model_call` on an empty request.

    Raises:
        TypeError: memory or skills given as one string instead of a list, or an argument
            `create_research_agent` does not take.
        ValueError: `interrupt_on` names a tool the agent would not have.
    """
    unknown = sorted(set(other) - _PROMPT_NEUTRAL_ARGUMENTS)
    if unknown:
        msg = f"assemble_prompt() got unexpected arguments: {', '.join(unknown)}"
        raise TypeError(msg)
    plan = plan_agent(
        tools,
        system_prompt=system_prompt,
        memory=memory,
        skills=skills,
        subagents=subagents,
        backend=backend,
        interrupt_on=interrupt_on,
        profile=profile,
        middleware=middleware,
        compaction_tool=bool(other.get("compaction_tool")),
        name=cast("str | None", other.get("name")),  # as create_research_agent takes it
    )
    from jupyter_deepagent.harness.prompt.middleware_text import middleware_prompt_text

    extra = middleware_prompt_text(middleware, model) if middleware else ""
    window = cast("int | None", other.get("context_window"))  # checked by the window's resolution
    config = with_memory_budget(plan.config, model, window)
    return build_assembly(config, plan.backend, middleware_text=extra).assembly


def create_research_agent(
    model: ChatModelInput,
    tools: Sequence[AgentTool] = (),
    *,
    system_prompt: str | None = None,
    memory: Sequence[str] = (),
    skills: Sequence[str] = (),
    subagents: Sequence[object] = (),
    backend: BackendProtocol | None = None,
    store: BaseStore | None = None,
    checkpointer: Checkpointer = None,
    context_schema: type | None = None,
    state_schema: type | None = None,
    middleware: Sequence[Middleware] = (),
    interrupt_on: Approvals | None = None,
    profile: HarnessProfile | None = None,
    name: str | None = None,
    response_format: object = None,
    max_parallel_subagents: int = 4,
    context_window: int | None = None,
    offload_token_limit: int = 20_000,
    summarizer: SummarizerInput | None = None,
    compaction_tool: bool = False,
    age_token_limit: int | None = 2_000,
    keep_recent_turns: int = 1,
    model_timeout: float | None = 60.0,
    model_retries: int = 2,
    model_retry_wait: float = 2.0,
    budget_pauses: bool | None = None,
) -> CompiledStateGraph:
    """Create a research agent: a compiled LangGraph graph (`invoke`, `stream`, `ainvoke`).

    Args:
        model: a chat model, or a "provider:model" string (`google_genai:` by default,
            `scripted:path.yaml` for a scripted offline model).
        tools: extra tools, besides the filesystem tools and `write_todos`.
        system_prompt: your instructions; the first section of the system prompt.
        memory: AGENTS.md-style files (virtual paths) loaded into every model call.
        skills: folders (virtual paths) holding `<skill>/SKILL.md`; listed, loaded on demand.
        subagents: `SubAgent`, `CompiledSubAgent` or dict specs for the `task` tool; a
            `general-purpose` subagent is offered too unless the profile turns it off.
        backend: where the files live; default a `StateBackend` (files in the thread's state).
        store: a LangGraph store (long-term memory), handed to the graph.
        checkpointer: a LangGraph checkpointer; needed for threads and `interrupt_on`.
        context_schema: the type of the runtime context passed as `context=` at invoke.
        state_schema: extra state fields (an `AgentState` subclass) that are checkpointed.
        middleware: your own `AgentMiddleware`; prompt text they add becomes section 8.
        interrupt_on: tool name -> True or an `InterruptOnConfig`: ask a person first.
        profile: a `HarnessProfile` (base prompt, suffix, tool descriptions, excluded tools).
        name: the graph's name.
        response_format: a pydantic model, TypedDict or JSON schema for a structured final
            answer (in the final state's `structured_response`).
        max_parallel_subagents: how many `task` calls run at once; further ones wait.
        context_window: tokens the model accepts; default the model's profile
            (`max_input_tokens`), else 200,000 with a warning event.
        offload_token_limit: a tool result over this many tokens (or a quarter of the window,
            if smaller) is saved to `/large_tool_results/` and replaced by a pointer.
        summarizer: the chat model, "provider:model" string or callable `(messages) -> str`
            that writes summaries; default the agent's model.
        compaction_tool: offer the `compact_conversation` tool.
        age_token_limit: a tool result over this many tokens that the model has already replied
            to `keep_recent_turns` times is sent as a pointer to its file (None: never). Such
            results age together, in batches (about a sixteenth of the window, at most 25,000
            tokens), so a provider's prompt cache keeps the rest of the request.
        keep_recent_turns: model replies a large result stays whole for, at least.
        model_timeout: seconds one model call may take, given to the provider's client when
            `model` is a "provider:model" string (Google, OpenAI, Anthropic); None: no limit.
        model_retries: further attempts after a model call fails with a transient error
            (network, timeout, rate limit, server error), each reported as a `model_retry`
            event; the provider client's own silent retries are turned off.
        model_retry_wait: seconds before the first retry; each later wait doubles.
        budget_pauses: whether a run's budget (`trace_run(budget=...)`) pauses the run for an
            answer (True) or stops it (False); None: pause when there is a checkpointer.
            Subagents pause through their caller's.

    Returns:
        The compiled agent graph. Its custom stream (`stream_mode="custom"`) carries run events.

    Raises:
        ValueError: `interrupt_on` without a checkpointer (also in a subagent), or naming a tool
            the agent (or that subagent) does not have; `max_parallel_subagents` below 1, a
            compression limit that is not positive, or a negative retry setting.
        ModelConfigurationError: the model string cannot be resolved (e.g. missing API key).
    """
    from langchain.agents import create_agent

    from jupyter_deepagent.harness.agent_stack import middleware_stack
    from jupyter_deepagent.harness.compression.middleware import ContextCompressionMiddleware
    from jupyter_deepagent.harness.compression.state import CompressionSettings
    from jupyter_deepagent.harness.models.call_policy import ModelCallPolicy
    from jupyter_deepagent.harness.models.label import MODEL_METADATA_KEY, model_label
    from jupyter_deepagent.harness.models.resolution import resolve_model

    asks = not isinstance(interrupt_on, Mapping) or any(interrupt_on.values())
    if interrupt_on and asks and checkpointer is None:
        msg = (
            "interrupt_on needs a checkpointer to pause a run and resume it: pass "
            "checkpointer=InMemorySaver() (from langgraph.checkpoint.memory) or a SqliteSaver."
        )
        raise ValueError(msg)
    plan = plan_agent(
        tools,
        system_prompt=system_prompt,
        memory=memory,
        skills=skills,
        subagents=subagents,
        backend=backend,
        interrupt_on=interrupt_on,
        profile=profile,
        middleware=middleware,
        compaction_tool=compaction_tool,
        name=name,
    )
    approvals = plan.config.interrupt_on  # checked; an inherited set narrowed to this agent
    if approvals and checkpointer is None:
        raise ValueError(needs_checkpointer(approvals, [*tools, *middleware_tools(middleware)]))
    policy = ModelCallPolicy(model_timeout, model_retries, model_retry_wait)
    chat_model = resolve_model(model, call_policy=policy)
    assembly_config = with_memory_budget(plan.config, chat_model, context_window)
    compression_options: _CompressionOptions = {
        "context_window": context_window,
        "offload_token_limit": offload_token_limit,
        "summarizer": summarizer,
        "compaction_tool": compaction_tool,
        "age_token_limit": age_token_limit,
        "keep_recent_turns": keep_recent_turns,
    }
    compression = ContextCompressionMiddleware(
        plan.backend, chat_model, CompressionSettings(**compression_options, call_policy=policy)
    )
    task = None
    if plan.subagents:
        from jupyter_deepagent.harness.subagents.task_tool import (
            SubAgentMiddleware,
            check_max_parallel,
        )

        check_max_parallel(max_parallel_subagents)
        defaults = _SubagentDefaults(
            model=chat_model,
            tools=tuple(tools),
            skills=tuple(skills),
            backend=plan.backend,
            profile=plan.profile,
            interrupt_on=plan.approvals or None,
            checkpointer=checkpointer,
            store=store,
            context_schema=context_schema,
            options={
                **compression_options,
                "model_timeout": model_timeout,
                "model_retries": model_retries,
                "model_retry_wait": model_retry_wait,
            },
        )
        # a subagent builds its own stack, in the same order
        runnables = {spec.name: _build_subagent(spec, defaults) for spec in plan.subagents}
        task = SubAgentMiddleware(
            plan.subagents, runnables, plan.backend, max_parallel=max_parallel_subagents
        )
    stack = middleware_stack(
        plan,
        model=chat_model,
        assembly=assembly_config,
        compression=compression,
        policy=policy,
        task=task,
        user_middleware=middleware,
        can_pause=checkpointer is not None if budget_pauses is None else budget_pauses,
    )
    # one call for every form of response_format, which LangChain's overloads take one at a time
    build_graph: Callable[..., CompiledStateGraph] = create_agent
    graph = build_graph(
        chat_model,
        tools=list(tools),
        middleware=stack,
        context_schema=context_schema,
        state_schema=state_schema,
        checkpointer=checkpointer,
        store=store,
        name=name,
        response_format=response_format,
    )
    # views (run_started) name the model from the graph's own config, not its internals
    return graph.with_config({"metadata": {MODEL_METADATA_KEY: model_label(chat_model)}})


class _CompressionOptions(TypedDict):
    """The compression keywords of `create_research_agent`, as a subagent gets them too."""

    context_window: int | None
    offload_token_limit: int
    summarizer: SummarizerInput | None
    compaction_tool: bool
    age_token_limit: int | None
    keep_recent_turns: int


class _SharedOptions(_CompressionOptions, total=False):
    """Every `create_research_agent` keyword a subagent takes as its caller was given it."""

    model_timeout: float | None
    model_retries: int
    model_retry_wait: float


@dataclass(frozen=True)
class _SubagentDefaults:
    """What a subagent takes from the agent that calls it, unless its spec says otherwise.

    `options` holds further `create_research_agent` keywords given to every subagent as they were
    given to the caller (compression settings, for instance).
    """

    model: BaseChatModel
    tools: tuple[AgentTool, ...]
    skills: tuple[str, ...]
    backend: BackendProtocol
    profile: HarnessProfile
    interrupt_on: Approvals | None
    checkpointer: Checkpointer
    store: BaseStore | None
    context_schema: type | None
    options: _SharedOptions


def _build_subagent(spec: SubAgentSpec, defaults: _SubagentDefaults) -> Runnable[object, object]:
    """The runnable behind a spec: a `CompiledSubAgent`'s own, or a research agent built from it.

    The subagent asks for every approval its caller asks for (of the tools it has), plus its
    own `interrupt_on`, and for every call of a code-running tool (see `approval_policy`).

    Raises:
        ValueError: the subagent may pause for approval (`interrupt_on`, or a tool that runs
            code) but the caller has no checkpointer to pause and resume the run with; or its
            `interrupt_on` turns off an approval its caller asks for.
        TypeError: its `interrupt_on` is not a mapping.
    """
    from jupyter_deepagent.harness.subagents.specs import GENERAL_PURPOSE, CompiledSubAgent

    if isinstance(spec, CompiledSubAgent):
        return spec.runnable
    tools = list(spec.tools) if spec.tools is not None else list(defaults.tools)
    # with the tools its own middleware brings, which may run code too
    offered = [*tools, *middleware_tools(spec.middleware)]
    interrupt_on = subagent_approvals(spec.name, defaults.interrupt_on, spec.interrupt_on, offered)
    may_ask = bool(asked_approvals(interrupt_on, offered) or (interrupt_on and interrupt_on.own))
    if may_ask and defaults.checkpointer is None:
        msg = (
            f"subagent {spec.name!r} has interrupt_on or a tool that runs code, so a run may "
            "pause for approval inside it: pass checkpointer= (e.g. InMemorySaver()) to "
            "create_research_agent"
        )
        raise ValueError(msg)
    skills = spec.skills
    if skills is None:
        skills = defaults.skills if spec.name == GENERAL_PURPOSE else ()
    return create_research_agent(
        spec.model if spec.model is not None else defaults.model,
        tools,
        system_prompt=spec.system_prompt,
        skills=skills,
        backend=defaults.backend,
        store=defaults.store,
        # a nested graph uses its caller's checkpointer; giving it here only states that it has one
        checkpointer=defaults.checkpointer if may_ask else None,
        context_schema=defaults.context_schema,
        middleware=spec.middleware,
        interrupt_on=interrupt_on,
        profile=replace(defaults.profile, general_purpose_subagent=False),
        name=spec.name,
        response_format=spec.response_format,
        # a nested graph pauses through its caller's checkpointer, as approvals inside it do
        budget_pauses=defaults.checkpointer is not None,
        **defaults.options,
    )
