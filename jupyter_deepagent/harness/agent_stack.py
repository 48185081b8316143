"""The middleware stack of a research agent, in its one order, with the reason for each place.

`create_agent` runs the first middleware outermost: its `wrap_model_call`/`wrap_tool_call` sees
the request first and the response last. So, outermost first:

1. todo list, filesystem, task: tools and state only, no prompt edits; any order.
2. user middleware: outside the prompt middleware, so what they add to the system message is
   caught as section 8.
3. human in the loop: its `after_model` pauses a call before any tool runs.
4. budget: outside the prompt and compression, so a pause comes before the step spends anything
   (no summary is written, and paid for, twice when the step runs again on resume).
5. system prompt: writes the assembled prompt; the model gets exactly it.
6. compression: inside the prompt, it counts the final prompt's tokens and trims only the
   messages; offloads tool results.
7. Anthropic cache breakpoints (only with an Anthropic model): inside compression, so they mark
   the final system message, tools and last message; a retry resends the same marked request.
8. model retries: inside compression, which sees a transient error only once the retries are
   spent; a context overflow is not retried and reaches it at once.
9. run events: inside compression, a `model_call` event per request as really sent, retries
   included; a `tool_result` with the tool's own text, before offloading.
10. tool errors: innermost, a failing tool becomes an error message that every layer above sees
   as an ordinary result.

Layers 4 to 10 run as one LangChain middleware, `ResearchHarness` (`ChainedMiddleware`), which
chains their hooks in this order itself: LangChain's wrapper around each middleware's hooks cost
more than most of these layers do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain.agents.middleware import ToolCallRequest

    from jupyter_deepagent.harness.agent_inputs import Middleware
    from jupyter_deepagent.harness.agent_plan import AgentPlan
    from jupyter_deepagent.harness.compression.middleware import ContextCompressionMiddleware
    from jupyter_deepagent.harness.models.call_policy import ModelCallPolicy
    from jupyter_deepagent.harness.prompt.assembly import AssemblyConfig

__all__ = ["HARNESS_LAYERS", "middleware_stack"]

HARNESS_LAYERS = "ResearchHarness"
"""The name of the one middleware running layers 4-10 (its graph node and LangSmith span)."""


def middleware_stack(
    plan: AgentPlan,
    *,
    model: object,
    assembly: AssemblyConfig,
    compression: ContextCompressionMiddleware,
    policy: ModelCallPolicy,
    task: Middleware | None,
    user_middleware: Sequence[Middleware],
    can_pause: bool = True,
) -> list[Middleware]:
    """The agent's middleware, outermost first.

    Args:
        plan: what the agent offers (todo list, filesystem tools, backend, profile).
        model: the agent's chat model (an Anthropic one gets cache breakpoints).
        assembly: the prompt's assembly config, its approvals checked.
        compression: the agent's context compression.
        policy: the timeout and retries of a model call.
        task: the `task` tool's middleware over the built subagents; None without subagents.
        user_middleware: the caller's own middleware.
        can_pause: the agent has a checkpointer, so a budget pause can be resumed (without one
            the run stops at its budget instead).
    """
    from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolErrorMiddleware

    from jupyter_deepagent.harness.budget.middleware import BudgetMiddleware
    from jupyter_deepagent.harness.chained_middleware import ChainedMiddleware
    from jupyter_deepagent.harness.models.retry import ModelRetryMiddleware
    from jupyter_deepagent.harness.prompt.middleware import SystemPromptMiddleware
    from jupyter_deepagent.harness.run_events.middleware import RunEventsMiddleware
    from jupyter_deepagent.harness.tools.filesystem import FILESYSTEM_TOOL_NAMES
    from jupyter_deepagent.harness.tools.filesystem_middleware import FilesystemMiddleware
    from jupyter_deepagent.harness.tools.todo_middleware import TodoMiddleware

    stack: list[Middleware] = []
    if plan.todos:
        # write_todos and the todos channel; its prompt text is left to the assembly
        stack.append(TodoMiddleware())
    hidden = set(plan.profile.excluded_tools) & set(FILESYSTEM_TOOL_NAMES)
    # the filesystem tools and the `files` channel a StateBackend writes to
    stack.append(FilesystemMiddleware(plan.backend, exclude=tuple(hidden)))
    if task is not None:
        # the `task` tool; each subagent was built with its own stack in this same order
        stack.append(task)
    # outside the prompt middleware, so their system-message edits become the "middleware" section
    stack.extend(user_middleware)
    if assembly.interrupt_on:
        # pauses after the model replies and before any tool runs; the prompt section for it is
        # assembled by the prompt middleware, not written by LangChain's middleware
        stack.append(HumanInTheLoopMiddleware(interrupt_on=dict(assembly.interrupt_on)))
    # the harness's own layers, run as one middleware (LangChain's wrapper of each costs more
    # than most of them do)
    layers: list[Middleware] = []
    # pauses (or stops) the run before a call that would pass its budget, before the step
    # spends anything; a no-op in a run without a budget
    layers.append(BudgetMiddleware(can_pause=can_pause))
    # owns the system message: replaces it with the PromptAssembly built for this call
    layers.append(SystemPromptMiddleware(assembly, plan.backend))
    # sees the final system prompt (to count it) and shrinks only the messages
    layers.append(compression)
    breakpoints = _anthropic_cache_breakpoints(model)
    if breakpoints is not None:
        # marks the request as compression leaves it: what the next request repeats is cached
        layers.append(breakpoints)
    # sends a request again after a transient failure, a model_retry event each time
    layers.append(ModelRetryMiddleware(policy))
    # closest to the model and the tools: reports what was really sent and really returned
    layers.append(RunEventsMiddleware())
    # innermost for tools: an exception becomes an error ToolMessage before anything above sees it
    layers.append(ToolErrorMiddleware(on_error=_tool_error_message))
    stack.append(ChainedMiddleware(layers, name=HARNESS_LAYERS))
    return stack


def _anthropic_cache_breakpoints(model: object) -> Middleware | None:
    """LangChain's Anthropic prompt-caching middleware for an Anthropic model (known by its
    label, also inside the research log's replay wrapper); None for any other model, or when
    langchain-anthropic is not installed."""
    from jupyter_deepagent.harness.compression.cache_marks import places_cache_marks

    if not places_cache_marks(model):
        return None
    try:
        from jupyter_deepagent.harness.prompt.cache_breakpoints import AnthropicCacheBreakpoints
    except ImportError:  # langchain-anthropic is not installed: no Anthropic model either
        return None
    return AnthropicCacheBreakpoints()


def _tool_error_message(exc: Exception, request: ToolCallRequest) -> str:
    """A tool that raised: tell the model what happened so the run goes on."""
    name = request.tool_call["name"]
    return (
        f"Error: the tool `{name}` raised {type(exc).__name__}: {exc}. Check the arguments, "
        "or try a different approach; do not repeat the same call unchanged."
    )
