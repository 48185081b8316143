"""`create_research_agent`: a LangGraph deep agent whose whole context is inspectable data.

Built on `langchain.agents.create_agent`. Parameter names follow deepagents' `create_deep_agent`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.approval_policy import (
    InheritedApprovals,
    asked_approvals,
    code_running_tools,
)
from jupyter_deepagent.harness.prompt.assembly import AssemblyConfig, build_assembly, tool_names_of
from jupyter_deepagent.harness.prompt.profile import HarnessProfile
from jupyter_deepagent.harness.prompt.sections import PromptAssembly

__all__ = ["assemble_prompt", "create_research_agent"]


@dataclass(frozen=True)
class _Plan:
    """What the harness will put together, derived once from the arguments."""

    backend: BackendProtocol
    profile: HarnessProfile
    filesystem_tools: tuple[str, ...]
    todos: bool
    config: AssemblyConfig
    subagents: tuple[Any, ...] = ()
    approvals: dict[str, Any] | None = None
    """What subagents inherit: every approval asked for, and the opt-outs (False) by name."""


def _plan(
    tools: Sequence[Any],
    *,
    system_prompt: str | None,
    memory: Sequence[str],
    skills: Sequence[str],
    subagents: Sequence[Any] = (),
    backend: BackendProtocol | None,
    interrupt_on: Mapping[str, Any] | None,
    profile: HarnessProfile | None,
    middleware: Sequence[Any] = (),
    compaction_tool: bool = False,
    name: str | None = None,
) -> _Plan:
    from jupyter_deepagent.backends.state import StateBackend
    from jupyter_deepagent.harness.subagents.specs import normalize_subagents, subagents_prompt
    from jupyter_deepagent.harness.tools.filesystem import FILESYSTEM_TOOL_NAMES, filesystem_prompt

    if isinstance(memory, str) or isinstance(skills, str):
        msg = "memory and skills take a list of paths, e.g. memory=['/AGENTS.md']"
        raise TypeError(msg)
    profile = profile or HarnessProfile()
    backend = backend if backend is not None else StateBackend()
    excluded = set(profile.excluded_tools)
    fs_tools = tuple(name for name in FILESYSTEM_TOOL_NAMES if name not in excluded)
    todos = "write_todos" not in excluded
    specs = ()
    if "task" not in excluded:
        specs = normalize_subagents(subagents, general_purpose=profile.general_purpose_subagent)
    names = (*tool_names_of(tools), *fs_tools, *(("write_todos",) if todos else ()))
    names += ("task",) if specs else ()
    tool_names = tuple(n for n in names if n not in excluded)
    offered = [*tool_names, *(("compact_conversation",) if compaction_tool else ())]
    own_tools = [*tools, *_middleware_tools(middleware)]
    offered.extend(tool_names_of(_middleware_tools(middleware)))
    checked = _checked_approvals(
        interrupt_on, [n for n in offered if n and n not in excluded], name, excluded
    )
    asked = asked_approvals(
        checked, [tool for tool in own_tools if tool_names_of([tool])[0] not in excluded]
    )
    config = AssemblyConfig(
        system_prompt=system_prompt,
        memory=tuple(memory),
        skills=tuple(skills),
        profile=profile,
        tool_names=tool_names,
        filesystem_text=filesystem_prompt(fs_tools) if fs_tools else "",
        subagents_text=subagents_prompt(specs) if specs else "",
        interrupt_on=asked or None,
    )
    return _Plan(backend, profile, fs_tools, todos, config, specs, {**(checked or {}), **asked})


def _middleware_tools(middleware: Sequence[Any]) -> list[Any]:
    return [tool for layer in middleware for tool in getattr(layer, "tools", None) or ()]


def _needs_checkpointer(approvals: Mapping[str, Any], tools: Sequence[Any]) -> str:
    """Why an agent that asks for approvals cannot be built without a checkpointer."""
    code = [name for name in code_running_tools(tools) if name in approvals]
    if not code:
        return (
            "interrupt_on needs a checkpointer to pause a run and resume it: pass "
            "checkpointer=InMemorySaver() (from langgraph.checkpoint.memory) or a SqliteSaver."
        )
    return (
        f"the tool {code[0]!r} runs code, so every call of it waits for a person's approval, "
        "which needs a checkpointer to pause the run and resume it: pass "
        "checkpointer=InMemorySaver() (from langgraph.checkpoint.memory) or a SqliteSaver, "
        f"or turn its approval off by name with interrupt_on={{{code[0]!r}: False}}."
    )


def _checked_approvals(
    interrupt_on: Mapping[str, Any] | None,
    available: Sequence[str],
    agent: str | None,
    hidden: Collection[str] = (),
) -> dict[str, Any] | None:
    """`interrupt_on` as a dict, refusing tool names the agent does not have.

    A misspelled name would otherwise switch approval off for the tool meant, without a word. A
    subagent's (`InheritedApprovals`) is its caller's for the tools it has, plus its own checked.

    Raises:
        TypeError: `interrupt_on` is not a mapping.
        ValueError: a name is not one of the agent's tools; the message lists the valid ones.
    """
    if not interrupt_on:
        return None
    if not isinstance(interrupt_on, Mapping):
        msg = (
            "interrupt_on takes a mapping of tool name -> True or an InterruptOnConfig, e.g. "
            f"{{'write_file': True}}, not a {type(interrupt_on).__name__}"
        )
        raise TypeError(msg)
    if isinstance(interrupt_on, InheritedApprovals):
        _checked_approvals(interrupt_on.own, available, agent, hidden)
        return interrupt_on.merged(available) or None
    unknown = [name for name in interrupt_on if name not in available]
    if unknown:
        whose = f"the agent {agent!r}" if agent else "the agent"
        listed = ", ".join(
            f"{name!r} (hidden by the profile's excluded_tools)" if name in hidden else repr(name)
            for name in unknown
        )
        msg = (
            f"interrupt_on names {'a tool' if len(unknown) == 1 else 'tools'} {whose} does not "
            f"have: {listed}, so no approval would ever be asked for "
            f"{'it' if len(unknown) == 1 else 'them'}. Valid names: {', '.join(sorted(available))}."
        )
        raise ValueError(msg)
    return dict(interrupt_on)


def _with_memory_budget(
    config: AssemblyConfig, model: Any, context_window: int | None
) -> AssemblyConfig:
    """The assembly config with the token budget of one memory file set from the window."""
    from jupyter_deepagent.harness.compression.tokens import resolve_context_window
    from jupyter_deepagent.harness.prompt.memory import memory_token_budget

    window = resolve_context_window(model if not isinstance(model, str) else None, context_window)
    known = window.tokens if window.source != "default" else None
    return replace(config, memory_token_budget=memory_token_budget(known))


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
    }
)


def _tool_error_message(exc: Exception, request: Any) -> str:
    """A tool that raised: tell the model what happened so the run goes on."""
    name = request.tool_call["name"]
    return (
        f"Error: the tool `{name}` raised {type(exc).__name__}: {exc}. Check the arguments, "
        "or try a different approach; do not repeat the same call unchanged."
    )


def assemble_prompt(
    model: Any = None,
    tools: Sequence[Any] = (),
    *,
    system_prompt: str | None = None,
    memory: Sequence[str] = (),
    skills: Sequence[str] = (),
    subagents: Sequence[Any] = (),
    backend: BackendProtocol | None = None,
    interrupt_on: Mapping[str, Any] | None = None,
    profile: HarnessProfile | None = None,
    middleware: Sequence[Any] = (),
    **other: Any,
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
    plan = _plan(
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
        name=other.get("name"),
    )
    from jupyter_deepagent.harness.prompt.middleware_text import middleware_prompt_text

    extra = middleware_prompt_text(middleware, model) if middleware else ""
    config = _with_memory_budget(plan.config, model, other.get("context_window"))
    return build_assembly(config, plan.backend, middleware_text=extra).assembly


def create_research_agent(
    model: Any,
    tools: Sequence[Any] = (),
    *,
    system_prompt: str | None = None,
    memory: Sequence[str] = (),
    skills: Sequence[str] = (),
    subagents: Sequence[Any] = (),
    backend: BackendProtocol | None = None,
    store: Any = None,
    checkpointer: Any = None,
    context_schema: type | None = None,
    state_schema: type | None = None,
    middleware: Sequence[Any] = (),
    interrupt_on: Mapping[str, Any] | None = None,
    profile: HarnessProfile | None = None,
    name: str | None = None,
    response_format: Any = None,
    max_parallel_subagents: int = 4,
    context_window: int | None = None,
    offload_token_limit: int = 20_000,
    summarizer: Any = None,
    compaction_tool: bool = False,
    age_token_limit: int | None = 2_000,
    keep_recent_turns: int = 3,
    model_timeout: float | None = 60.0,
    model_retries: int = 2,
    model_retry_wait: float = 2.0,
) -> Any:
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
            to `keep_recent_turns` times is sent as a pointer to its file (None: never).
        keep_recent_turns: model replies a large result stays whole for.
        model_timeout: seconds one model call may take, given to the provider's client when
            `model` is a "provider:model" string (Google, OpenAI, Anthropic); None: no limit.
        model_retries: further attempts after a model call fails with a transient error
            (network, timeout, rate limit, server error), each reported as a `model_retry`
            event; the provider client's own silent retries are turned off.
        model_retry_wait: seconds before the first retry; each later wait doubles.

    Returns:
        The compiled agent graph. Its custom stream (`stream_mode="custom"`) carries run events.

    Raises:
        ValueError: `interrupt_on` without a checkpointer (also in a subagent), or naming a tool
            the agent (or that subagent) does not have; `max_parallel_subagents` below 1, a
            compression limit that is not positive, or a negative retry setting.
        ModelConfigurationError: the model string cannot be resolved (e.g. missing API key).
    """
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolErrorMiddleware

    from jupyter_deepagent.harness.compression.middleware import ContextCompressionMiddleware
    from jupyter_deepagent.harness.compression.state import CompressionSettings
    from jupyter_deepagent.harness.models.call_policy import ModelCallPolicy
    from jupyter_deepagent.harness.models.label import MODEL_METADATA_KEY, model_label
    from jupyter_deepagent.harness.models.resolution import resolve_model
    from jupyter_deepagent.harness.models.retry import ModelRetryMiddleware
    from jupyter_deepagent.harness.prompt.middleware import SystemPromptMiddleware
    from jupyter_deepagent.harness.run_events.middleware import RunEventsMiddleware
    from jupyter_deepagent.harness.tools.filesystem import FILESYSTEM_TOOL_NAMES
    from jupyter_deepagent.harness.tools.filesystem_middleware import FilesystemMiddleware
    from jupyter_deepagent.harness.tools.todo_middleware import TodoMiddleware

    asks = not isinstance(interrupt_on, Mapping) or any(interrupt_on.values())
    if interrupt_on and asks and checkpointer is None:
        msg = (
            "interrupt_on needs a checkpointer to pause a run and resume it: pass "
            "checkpointer=InMemorySaver() (from langgraph.checkpoint.memory) or a SqliteSaver."
        )
        raise ValueError(msg)
    plan = _plan(
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
        raise ValueError(_needs_checkpointer(approvals, [*tools, *_middleware_tools(middleware)]))
    policy = ModelCallPolicy(model_timeout, model_retries, model_retry_wait)
    chat_model = resolve_model(model, call_policy=policy)
    assembly_config = _with_memory_budget(plan.config, chat_model, context_window)
    compression_options = {
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
    # The middleware order. `create_agent` runs the first middleware outermost: its
    # `wrap_model_call`/`wrap_tool_call` sees the request first and the response last. So:
    #   todo list, filesystem, task       (tools and state only, no prompt edits; any order)
    #   user middleware                   (outside the prompt middleware: what they add to the
    #                                      system message is caught as section 8)
    #   human in the loop                 (its after_model pauses a call before any tool runs)
    #   system prompt                     (writes the assembled prompt; the model gets exactly it)
    #   compression                       (inside the prompt: it counts the final prompt's tokens
    #                                      and trims only the messages; offloads tool results)
    #   model retries                     (inside compression, which sees a transient error only
    #                                      once the retries are spent; a context overflow is not
    #                                      retried and reaches it at once)
    #   run events                        (inside compression: a model_call event per request as
    #                                      really sent, retries included; a tool_result with the
    #                                      tool's own text, before offloading)
    #   tool errors                       (innermost: a failing tool becomes an error message that
    #                                      every layer above sees as an ordinary result)
    stack: list[Any] = []
    if plan.todos:
        # write_todos and the todos channel; its prompt text is left to the assembly
        stack.append(TodoMiddleware())
    hidden = set(plan.profile.excluded_tools) & set(FILESYSTEM_TOOL_NAMES)
    # the filesystem tools and the `files` channel a StateBackend writes to
    stack.append(FilesystemMiddleware(plan.backend, exclude=tuple(hidden)))
    if plan.subagents:
        from jupyter_deepagent.harness.subagents.task_tool import (
            SubagentDefaults,
            SubAgentMiddleware,
        )

        defaults = SubagentDefaults(
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
        # the `task` tool; a subagent builds its own stack in this same order
        stack.append(
            SubAgentMiddleware(plan.subagents, defaults, max_parallel=max_parallel_subagents)
        )
    # outside the prompt middleware, so their system-message edits become the "middleware" section
    stack.extend(middleware)
    if approvals:
        # pauses after the model replies and before any tool runs; the prompt section for it is
        # assembled below, not written by LangChain's middleware
        stack.append(HumanInTheLoopMiddleware(interrupt_on=approvals))
    # owns the system message: replaces it with the PromptAssembly built for this call
    stack.append(SystemPromptMiddleware(assembly_config, plan.backend))
    # sees the final system prompt (to count it) and shrinks only the messages
    stack.append(compression)
    # sends a request again after a transient failure, a model_retry event each time
    stack.append(ModelRetryMiddleware(policy))
    # closest to the model and the tools: reports what was really sent and really returned
    stack.append(RunEventsMiddleware())
    # innermost for tools: an exception becomes an error ToolMessage before anything above sees it
    stack.append(ToolErrorMiddleware(on_error=_tool_error_message))
    graph = create_agent(
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
