"""jupyter_deepagent: a deep research agent in the notebook, with its whole context visible.

Heavy dependencies (LangChain, LangGraph, pandas) load on first use of a name, not at import, so
`%load_ext jupyter_deepagent` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from jupyter_deepagent import _exceptions

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "BackendProtocol": "jupyter_deepagent.backends.protocol",
    "CompositeBackend": "jupyter_deepagent.backends.composite",
    "DiskBackend": "jupyter_deepagent.backends.disk",
    "StateBackend": "jupyter_deepagent.backends.state",
    "StoreBackend": "jupyter_deepagent.backends.store",
    "ScriptedChatModel": "jupyter_deepagent.harness.scripted_model",
    "resolve_model": "jupyter_deepagent.harness.model_resolution",
    "HarnessProfile": "jupyter_deepagent.harness.profile",
    "PromptAssembly": "jupyter_deepagent.harness.prompt",
    "PromptSection": "jupyter_deepagent.harness.prompt",
    "assemble_prompt": "jupyter_deepagent.harness.agent",
    "create_research_agent": "jupyter_deepagent.harness.agent",
    "RunTrace": "jupyter_deepagent.trace.run_trace",
    "trace_run": "jupyter_deepagent.trace.run_trace",
    "SubAgent": "jupyter_deepagent.harness.subagent_specs",
    "CompiledSubAgent": "jupyter_deepagent.harness.subagent_specs",
    "results_frame": "jupyter_deepagent.trace.results",
    "agent_tool": "jupyter_deepagent.jupyter.notebook_tools",
    "Inspector": "jupyter_deepagent.jupyter.inspector_widget",
}
# The exception module imports nothing, so reading its names here costs no start-up time.
_EXPORTS.update(dict.fromkeys(_exceptions.__all__, "jupyter_deepagent._exceptions"))

__all__ = sorted([*_EXPORTS, "__version__"])


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
        InvalidPath,
        MissingAPIKey,
        ModelCallFailed,
        ModelConfigurationError,
        PermissionDenied,
        ResearchAssistantError,
        ScriptError,
    )
    from jupyter_deepagent.backends.composite import CompositeBackend
    from jupyter_deepagent.backends.disk import DiskBackend
    from jupyter_deepagent.backends.protocol import BackendProtocol
    from jupyter_deepagent.backends.state import StateBackend
    from jupyter_deepagent.backends.store import StoreBackend
    from jupyter_deepagent.harness.agent import assemble_prompt, create_research_agent
    from jupyter_deepagent.harness.model_resolution import resolve_model
    from jupyter_deepagent.harness.profile import HarnessProfile
    from jupyter_deepagent.harness.prompt import PromptAssembly, PromptSection
    from jupyter_deepagent.harness.scripted_model import ScriptedChatModel
    from jupyter_deepagent.harness.subagent_specs import CompiledSubAgent, SubAgent
    from jupyter_deepagent.jupyter.inspector_widget import Inspector
    from jupyter_deepagent.jupyter.notebook_tools import agent_tool
    from jupyter_deepagent.trace.results import results_frame
    from jupyter_deepagent.trace.run_trace import RunTrace, trace_run
