"""jupyter_deepagent: a deep research agent in the notebook, with its whole context visible.

Heavy dependencies (LangChain, LangGraph, pandas) load on first use of a name, not at import, so
`%load_ext jupyter_deepagent` stays fast; it imports what the first run needs in a background
thread (`JUPYTER_DEEPAGENT_WARM_UP=0` turns that off).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from jupyter_deepagent import _exceptions

__version__ = "0.1.0"

__all__ = [
    "BackendError",
    "BackendProtocol",
    "BinaryFile",
    "CompiledSubAgent",
    "CompositeBackend",
    "ContextOverflow",
    "DatabaseUnreachable",
    "DiskBackend",
    "EditConflict",
    "FileNotFound",
    "FileTooLarge",
    "HarnessProfile",
    "InputError",
    "Inspector",
    "InvalidPath",
    "MissingAPIKey",
    "ModelCallFailed",
    "ModelConfigurationError",
    "PermissionDenied",
    "PromptAssembly",
    "PromptSection",
    "ProviderRefused",
    "RUNS_CODE",
    "RecordedCodeNotApproved",
    "ReplayMismatch",
    "ResearchAssistantError",
    "ResearchLogNotWritten",
    "RunTrace",
    "ScriptError",
    "ScriptedChatModel",
    "StateBackend",
    "StateDamaged",
    "StateNotWritten",
    "StoreBackend",
    "SubAgent",
    "ThreadBusy",
    "__version__",
    "agent_tool",
    "assemble_prompt",
    "atrace_run",
    "build_served_agent",
    "create_research_agent",
    "get_session",
    "resolve_model",
    "results_frame",
    "trace_remote_run",
    "trace_run",
]

# public name -> module that defines it (imported on first use of the name)
_EXPORTS: dict[str, str] = {
    "BackendProtocol": "jupyter_deepagent.backends.protocol",
    "CompositeBackend": "jupyter_deepagent.backends.composite",
    "DiskBackend": "jupyter_deepagent.backends.disk",
    "StateBackend": "jupyter_deepagent.backends.state",
    "StoreBackend": "jupyter_deepagent.backends.store",
    "ScriptedChatModel": "jupyter_deepagent.harness.models.scripted_model",
    "resolve_model": "jupyter_deepagent.harness.models.resolution",
    "HarnessProfile": "jupyter_deepagent.harness.prompt.profile",
    "RUNS_CODE": "jupyter_deepagent.harness.approval_policy",
    "PromptAssembly": "jupyter_deepagent.harness.prompt.sections",
    "PromptSection": "jupyter_deepagent.harness.prompt.sections",
    "assemble_prompt": "jupyter_deepagent.harness.agent",
    "create_research_agent": "jupyter_deepagent.harness.agent",
    "RunTrace": "jupyter_deepagent.trace.run_trace",
    "atrace_run": "jupyter_deepagent.trace.run_trace",
    "trace_run": "jupyter_deepagent.trace.run_trace",
    "SubAgent": "jupyter_deepagent.harness.subagents.specs",
    "CompiledSubAgent": "jupyter_deepagent.harness.subagents.specs",
    "results_frame": "jupyter_deepagent.trace.results",
    "trace_remote_run": "jupyter_deepagent.trace.remote_run",
    "build_served_agent": "jupyter_deepagent.server.served_agent",
    "agent_tool": "jupyter_deepagent.jupyter.tools.notebook_tools",
    "get_session": "jupyter_deepagent.jupyter.magic.magics",
    "Inspector": "jupyter_deepagent.jupyter.views.inspector_widget",
    **dict.fromkeys(_exceptions.__all__, "jupyter_deepagent._exceptions"),
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module 'jupyter_deepagent' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext jupyter_deepagent`: register the `%%agent` and `%agent` magics."""
    from jupyter_deepagent.project.module_shadowing import watch_missed_imports

    watch_missed_imports()  # first: the imports below and the first run's are watched
    from jupyter_deepagent.jupyter import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext jupyter_deepagent`: remove the magics and close the session's databases."""
    from jupyter_deepagent.jupyter import unload_ipython_extension as unload

    unload(ipython)


if TYPE_CHECKING:
    from jupyter_deepagent._exceptions import (
        BackendError,
        BinaryFile,
        ContextOverflow,
        EditConflict,
        FileNotFound,
        FileTooLarge,
        InputError,
        InvalidPath,
        MissingAPIKey,
        ModelCallFailed,
        ModelConfigurationError,
        PermissionDenied,
        ProviderRefused,
        ResearchAssistantError,
        ResearchLogNotWritten,
        ScriptError,
    )
    from jupyter_deepagent.backends.composite import CompositeBackend
    from jupyter_deepagent.backends.disk import DiskBackend
    from jupyter_deepagent.backends.protocol import BackendProtocol
    from jupyter_deepagent.backends.state import StateBackend
    from jupyter_deepagent.backends.store import StoreBackend
    from jupyter_deepagent.harness.agent import assemble_prompt, create_research_agent
    from jupyter_deepagent.harness.approval_policy import RUNS_CODE
    from jupyter_deepagent.harness.models.resolution import resolve_model
    from jupyter_deepagent.harness.models.scripted_model import ScriptedChatModel
    from jupyter_deepagent.harness.prompt.profile import HarnessProfile
    from jupyter_deepagent.harness.prompt.sections import PromptAssembly, PromptSection
    from jupyter_deepagent.harness.subagents.specs import CompiledSubAgent, SubAgent
    from jupyter_deepagent.jupyter.magic.magics import get_session
    from jupyter_deepagent.jupyter.tools.notebook_tools import agent_tool
    from jupyter_deepagent.jupyter.views.inspector_widget import Inspector
    from jupyter_deepagent.server.served_agent import build_served_agent
    from jupyter_deepagent.trace.remote_run import trace_remote_run
    from jupyter_deepagent.trace.results import results_frame
    from jupyter_deepagent.trace.run_trace import RunTrace, atrace_run, trace_run
