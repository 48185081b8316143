"""The middleware that owns the system prompt: memory, skills, profile and the prompt event.

It sits inside any user middleware, so whatever they add to the system message becomes the
"middleware" section, and the model receives exactly `PromptAssembly.text`.

The prompt is assembled at the first model call of a run (a graph invocation) and sent unchanged
at each later call of that run: memory and skills are read as they were then, so the system
message, the start of every request, stays the same and a provider's prompt cache keeps serving
it. An edit the agent makes to a memory file or a skill during a run (the conversation holds it
anyway) reaches the prompt at the next run.

A memory file is always loaded, but one larger than a tenth of the context window (20,000 tokens
when the window is not known) is cut by the assembly, with a marker the model sees; this
middleware adds a `warning` event (once per run) telling the user to trim it.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import PrivateStateAttr, ToolCallRequest
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from langgraph.types import Command

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.backends.state import bind_state_files, state_files
from jupyter_deepagent.events import MEMORY_LOADED, PROMPT, SKILL_LOADED, WARNING
from jupyter_deepagent.harness.compression.tokens import approx_tokens
from jupyter_deepagent.harness.prompt.assembly import AssemblyConfig, AssemblyResult, build_assembly
from jupyter_deepagent.harness.prompt.sections import PromptAssembly
from jupyter_deepagent.harness.run_events.event_stream import (
    current_agent,
    emit_event,
    first_in_run,
    prompt_changed,
    run_step,
)

__all__ = ["SystemPromptMiddleware"]

_RUNS_KEPT = 16
"""How many runs' prompts one agent keeps (concurrent runs of one agent, on other threads)."""


class _PromptRunState(AgentState):
    """The mark of the current run, under which its prompt is kept for all its model calls."""

    prompt_run: NotRequired[Annotated[str, PrivateStateAttr]]


class SystemPromptMiddleware(AgentMiddleware):
    """Assembles the system prompt at a run's first model call, sends it at every call of the
    run, and reports what went into it."""

    state_schema = _PromptRunState

    def __new__(cls, config: AssemblyConfig, backend: BackendProtocol) -> SystemPromptMiddleware:
        """With skills, the subclass that also watches tool calls for a SKILL.md read; without,
        this one, which adds no wrapper to any tool call (LangChain wraps every hook a middleware
        defines, and the wrapper costs each call whether it does anything or not)."""
        if cls is SystemPromptMiddleware and config.skills:
            cls = _SkillReadsMiddleware
        return super().__new__(cls)

    def __init__(self, config: AssemblyConfig, backend: BackendProtocol) -> None:
        super().__init__()
        self.config = config
        self.backend = backend
        self._runs: OrderedDict[tuple[str, str], AssemblyResult] = OrderedDict()
        self._runs_lock = threading.Lock()
        self._messages: OrderedDict[int, tuple[PromptAssembly, tuple[SystemMessage, str, int]]]
        self._messages = OrderedDict()

    # -- run start: report memory and skill problems once per run --------------------------------
    def before_agent(self, state: AgentState, runtime: Runtime) -> dict[str, str]:
        result = self._assemble(state)
        problems = [(m.path, m.problem) for m in result.memory if m.text is None]
        for memory_file in result.memory:
            if memory_file.text is not None:
                emit_event(
                    MEMORY_LOADED, path=memory_file.path, tokens=approx_tokens(memory_file.text)
                )
        for source, message in [*problems, *result.skills.problems]:
            if first_in_run(("warning", source, message), otherwise=True):
                emit_event(WARNING, message=message, source=source)
        return {"prompt_run": uuid.uuid4().hex}  # a new run: its prompt is assembled anew

    async def abefore_agent(self, state: AgentState, runtime: Runtime) -> dict[str, str]:
        return self.before_agent(state, runtime)

    # -- every model call: the assembled prompt, the profile's view of the tools ------------------
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(self._prepare(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await handler(self._prepare(request))

    def _prepare(self, request: ModelRequest) -> ModelRequest:
        outer = request.system_message.text if request.system_message is not None else ""
        step = run_step(request.state["messages"]) + 1
        assembly = self._fitted(self._run_prompt(request.state, outer), step)
        message, digest, tokens = self._system_message(assembly)
        emit_event(
            PROMPT,
            step=step,
            hash=digest,
            tokens=tokens,
            assembly=assembly.as_dict() if prompt_changed(digest) else None,
        )
        profile = self.config.profile
        if not profile.excluded_tools and not profile.tool_description_overrides:
            return request.override(system_message=message)
        return request.override(system_message=message, tools=self._visible_tools(request.tools))

    def _system_message(self, assembly: PromptAssembly) -> tuple[SystemMessage, str, int]:
        """The system message of `assembly`, its hash and tokens: made once per assembly (a run
        sends the same one at each call)."""
        with self._runs_lock:
            made = self._messages.get(id(assembly))
        if made is not None and made[0] is assembly:
            return made[1]
        text = assembly.text
        made = (
            assembly,
            (
                SystemMessage(content=text),
                hashlib.sha256(text.encode()).hexdigest()[:16],
                approx_tokens(text),
            ),
        )
        with self._runs_lock:
            self._messages[id(assembly)] = made
            while len(self._messages) > _RUNS_KEPT:
                self._messages.popitem(last=False)
        return made[1]

    def _fitted(self, result: AssemblyResult, step: int) -> PromptAssembly:
        """The assembly (oversized memory files already cut), warning once per run about each."""
        main_first_call = current_agent()[1] is None and step == 1
        for path, tokens in result.memory_cut:
            if first_in_run(("memory_cut", path, tokens), otherwise=main_first_call):
                emit_event(
                    WARNING,
                    step=step,
                    source=path,
                    message=(
                        f"The memory file {path} is {tokens:,} tokens, more than the "
                        f"{self.config.memory_token_budget:,} one memory file may take (a tenth of the "
                        "context window, or 20,000 tokens when it is not known), so only its "
                        "beginning is in the prompt. Trim it: keep lasting "
                        "facts and preferences, and move long notes to other files the agent can "
                        "read when it needs them."
                    ),
                )
        return result.assembly

    def _run_prompt(self, state: object, outer: str) -> AssemblyResult:
        """The run's assembly: built at its first model call (with the user middleware's text
        `outer`), then the same at every later call of the run."""
        run = state.get("prompt_run") if isinstance(state, dict) else None
        if not isinstance(run, str):  # no run mark (a graph without before_agent)
            return self._assemble(state, middleware_text=outer)
        key = (run, outer)
        with self._runs_lock:
            kept = self._runs.get(key)
        if kept is None:
            kept = self._assemble(state, middleware_text=outer)
            with self._runs_lock:
                self._runs[key] = kept
                while len(self._runs) > _RUNS_KEPT:
                    self._runs.popitem(last=False)
        return kept

    def _assemble(self, state: object, middleware_text: str = "") -> AssemblyResult:
        with bind_state_files(state_files(state)):
            return build_assembly(self.config, self.backend, middleware_text=middleware_text)

    def _visible_tools(
        self, tools: Sequence[BaseTool | dict[str, object]]
    ) -> list[BaseTool | dict[str, object]]:
        profile = self.config.profile
        visible: list[BaseTool | dict[str, object]] = []
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else getattr(tool, "name", None)
            name = name if isinstance(name, str) else None
            if name in profile.excluded_tools:
                continue
            override = profile.tool_description_overrides.get(name or "")
            if override is not None:
                if isinstance(tool, dict):
                    tool = {**tool, "description": override}
                else:
                    tool = tool.model_copy(update={"description": override})
            visible.append(tool)
        return visible


class _SkillReadsMiddleware(SystemPromptMiddleware):
    """`SystemPromptMiddleware` for an agent with skills: a SKILL.md read is a skill loaded."""

    @property
    def name(self) -> str:
        """The same name as without skills (it names the middleware's graph nodes)."""
        return SystemPromptMiddleware.__name__

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command]
    ) -> ToolMessage | Command:
        result = handler(request)
        self._note_skill_read(request, result)
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
    ) -> ToolMessage | Command:
        result = await handler(request)
        self._note_skill_read(request, result)
        return result

    def _note_skill_read(self, request: ToolCallRequest, result: ToolMessage | Command) -> None:
        call = request.tool_call
        if call["name"] != "read_file":
            return
        if isinstance(result, ToolMessage) and result.status == "error":
            return
        path = str(call.get("args", {}).get("file_path", ""))
        if not path.endswith("SKILL.md"):
            return
        path = "/" + path.lstrip("/")
        state = request.state if isinstance(request.state, dict) else {}
        with bind_state_files(state.get("files")):
            from jupyter_deepagent.harness.prompt.skills import scan_skills

            skill = scan_skills(self.backend, self.config.skills).by_path(path)
        if skill is not None:
            step = run_step(state.get("messages", []))
            emit_event(SKILL_LOADED, step=step, skill=skill.name, path=path)
