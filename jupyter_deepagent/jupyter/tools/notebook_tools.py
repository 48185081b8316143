"""Notebook functions as the agent's tools: `@agent_tool`, `--tools NAME`, `tools = [...]`.

A function becomes a LangChain tool through LangChain's own machinery
(`StructuredTool.from_function`): its name, its docstring as the description (Google-style
`Args:` lines describe the parameters) and its type hints as the argument schema. A function the
model could not call well is refused with a message saying what to add: no docstring, a
parameter without a type hint, `*args`/`**kwargs`, or a type the model cannot send as JSON (a
DataFrame, a file handle). A parameter typed `ToolRuntime` is filled in by LangChain: it carries
the run's `--context` values as `runtime.context`.

What the function prints (or displays) while the agent calls it goes into the tool's result,
not into the cell. An exception reaches the model as the tool's error, and the cell shows ✗.

`@agent_tool(runs_code=True)` marks a function that runs code the model sends: every call then
waits for your approval, in subagents too, like the python tool (see
`harness.approval_policy`). Mark any function that hands a model's string to something that
evaluates it: pandas' `DataFrame.query`, `DataFrame.eval` and `pd.eval` evaluate their string
as Python (an `@name` reaches `@__builtins__.__import__('os')`; method calls on the variables in
scope run), and `pd.read_pickle`, `np.load(allow_pickle=True)` or `pickle` run code from a file
the agent may have written; so do `eval`, `exec` and `subprocess` with the model's text.

LangChain loads when a function is first checked, not when this module is imported.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, TypeVar, overload

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell
    from langchain_core.tools import BaseTool

    from jupyter_deepagent.backends.protocol import BackendProtocol
    from jupyter_deepagent.project.settings.agent_config import AgentConfig

__all__ = [
    "agent_tool",
    "as_agent_tool",
    "tools_for_run",
]

_AGENT_TOOL_MARK = "__agent_tool__"
"""Attribute `@agent_tool` sets on a function: every run of this notebook's agent offers it."""
_RUNS_CODE_MARK = "__agent_tool_runs_code__"
"""Attribute `@agent_tool(runs_code=True)` sets: the function runs code the model sends."""

_F = TypeVar("_F", bound=Callable[..., object])
_JSON_TYPES = (
    "str, int, float, bool, None, a list or dict of those, a Literal[...], a TypedDict or a "
    "pydantic model"
)


@overload
def agent_tool(func: _F, /) -> _F: ...


@overload
def agent_tool(*, runs_code: bool = False) -> Callable[[_F], _F]: ...


def agent_tool(func: _F | None = None, /, *, runs_code: bool = False) -> _F | Callable[[_F], _F]:
    """Offer a notebook function to this notebook's agent in every `%%agent` run.

    `@agent_tool`, or `@agent_tool(runs_code=True)` for a function that runs code the model
    sends: each call of it then waits for your approval, as the python tool's do, whichever
    agent or subagent calls it. Mark every function that passes the model's text to something
    that evaluates it: pandas' `DataFrame.query(text)`, `DataFrame.eval(text)` and
    `pd.eval(text)` evaluate it as Python (`@__builtins__.__import__('os')...` runs, and so do
    method calls on the variables in scope); `pd.read_pickle`, `np.load(allow_pickle=True)` and
    `pickle.load` run code from a file the agent may have written; and `eval`, `exec`,
    `subprocess` or a SQL connection given the model's text do what it says.

    The function is checked at once (so a missing docstring or type hint shows in the cell that
    defines it) and returned unchanged: you can still call it yourself.

    Args:
        func: The function (when used as `@agent_tool` without parentheses).
        runs_code: The function runs code the model sends: always ask before it runs.

    Raises:
        TypeError: `func` is not a function, or `runs_code` is not True or False.
        ValueError: The model could not call it; the message says what to add.
    """
    if not isinstance(runs_code, bool):
        msg = f"@agent_tool(runs_code=...) takes True or False, not {runs_code!r}"
        raise TypeError(msg)

    def mark(function: _F) -> _F:
        if runs_code:
            setattr(function, _RUNS_CODE_MARK, True)
        as_agent_tool(function)
        setattr(function, _AGENT_TOOL_MARK, True)
        return function

    return mark if func is None else mark(func)


def as_agent_tool(obj: object, name: str | None = None) -> BaseTool:
    """A LangChain tool for `obj`: a LangChain tool is returned as it is, a function is wrapped.

    Args:
        obj: A function (or method) with a docstring and type hints, or a LangChain tool.
        name: The variable it was found under, used in messages.

    Raises:
        TypeError: `obj` is neither a function nor a LangChain tool.
        ValueError: The function has no docstring, an untyped or variadic parameter, or a
            parameter type the model cannot send; the message says what to add.
    """
    from langchain_core.tools import BaseTool, StructuredTool

    if isinstance(obj, BaseTool):
        return obj
    label = name or str(getattr(obj, "__name__", repr(obj)))
    if not (inspect.isfunction(obj) or inspect.ismethod(obj)):
        msg = (
            f"{label!r} is a {type(obj).__name__}, not a function: a tool must be a function "
            "defined with def (with a docstring and type hints) or a LangChain tool"
        )
        raise TypeError(msg)
    if not (inspect.getdoc(obj) or "").strip():
        msg = (
            f"{label}() has no docstring, and the model reads it to decide when to call the "
            f'tool. Add one under the def line, e.g. """What {obj.__name__} does, in one '
            'line.""" (Google-style Args: lines describe the parameters).'
        )
        raise ValueError(msg)
    _check_parameters(obj, label)
    try:
        tool = StructuredTool.from_function(
            _printing_into_result(obj), parse_docstring=True, error_on_invalid_docstring=False
        )
    except NameError as exc:
        msg = (
            f"{label}(): a type hint cannot be resolved ({exc}). Import what it names in the "
            "notebook before the def, or write the hint without quotes."
        )
        raise ValueError(msg) from None
    except Exception as exc:
        msg = f"{label}() cannot be offered as a tool: {type(exc).__name__}: {exc}"
        raise ValueError(msg) from None
    _check_schema(tool, label)
    if getattr(obj, _RUNS_CODE_MARK, False) is True:
        from jupyter_deepagent.harness.approval_policy import RUNS_CODE

        tool.metadata = {**(tool.metadata or {}), RUNS_CODE: True}
    return tool


def _notebook_tools(namespace: Mapping[str, object], names: Iterable[str]) -> list[BaseTool]:
    """The tools of a run: the functions marked with `@agent_tool`, then those in `names`.

    Raises:
        ValueError: A name is not defined in the notebook, or names a function that cannot be
            a tool; the message says what to do.
        TypeError: A name holds something that is neither a function nor a LangChain tool.
    """
    found: dict[str, object] = {}
    for key, value in list(namespace.items()):
        if key.startswith("_") or not inspect.isfunction(value):
            continue
        if getattr(value, _AGENT_TOOL_MARK, False) is True:
            found[key] = value
    for name in names:
        if name not in namespace:
            msg = (
                f"--tools {name}: the notebook has no function named {name!r}. Define it in a "
                "cell above (def with a docstring and type hints) and run that cell first."
            )
            raise ValueError(msg)
        found[name] = namespace[name]
    tools: dict[str, BaseTool] = {}
    for key, value in found.items():
        tool = as_agent_tool(value, key)
        tools.setdefault(tool.name, tool)
    return list(tools.values())


def tools_for_run(
    shell: InteractiveShell,
    settings: AgentConfig,
    backend: BackendProtocol,
    *,
    redact: Callable[[str], str] = str,
) -> tuple[list[BaseTool], dict[str, bool]]:
    """The notebook's tools for a run with `settings`, and the approvals they need.

    The functions marked with `@agent_tool` and those named in `settings.tools`; with
    `settings.python`, the python tool too, waiting for approval (in subagents too) unless
    `python_approval` is off: then the approvals hold `python: False`, the opt-out by name;
    with `settings.cells`, the propose_cell tool.

    Raises:
        ValueError: A named function is missing or cannot be a tool, or a notebook function
            takes the python tool's name.
        TypeError: A name holds something that is neither a function nor a LangChain tool.
    """
    from jupyter_deepagent.jupyter.tools.python_tool import PYTHON_TOOL_NAME, python_tool

    tools = _notebook_tools(getattr(shell, "user_ns", {}), settings.tools)
    approvals: dict[str, bool] = {}
    if settings.python:
        if any(tool.name == PYTHON_TOOL_NAME for tool in tools):
            msg = (
                f"a notebook tool is named {PYTHON_TOOL_NAME!r}, like the python tool that "
                "--python adds: rename the function"
            )
            raise ValueError(msg)
        tools.append(python_tool(shell, backend, seconds=settings.python_timeout, redact=redact))
        approvals[PYTHON_TOOL_NAME] = bool(settings.python_approval)
    if settings.cells:  # after the notebook's own, whose names it does not check
        from jupyter_deepagent.jupyter.tools.proposed_cells import propose_cell_tool

        tools.append(propose_cell_tool())
    return tools, approvals


def _check_parameters(func: Callable[..., object], label: str) -> None:
    """Refuse untyped and variadic parameters (the model would get no schema for them)."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        msg = f"{label}() cannot be offered as a tool: its signature cannot be read ({exc})"
        raise ValueError(msg) from None
    for parameter in signature.parameters.values():
        if parameter.name in ("self", "cls"):
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            msg = (
                f"{label}() takes {parameter}: the model calls a tool with named arguments only. "
                "Replace it with named parameters with type hints."
            )
            raise ValueError(msg)
        if parameter.annotation is inspect.Parameter.empty:
            msg = (
                f"{label}(): parameter {parameter.name!r} has no type hint, so the model would "
                f"not know what to send. Add one, e.g. {parameter.name}: str (any of: "
                f"{_JSON_TYPES})."
            )
            raise ValueError(msg)


def _check_schema(tool: BaseTool, label: str) -> None:
    """Refuse parameters whose type has no JSON schema (the model sends JSON)."""
    from pydantic import BaseModel, TypeAdapter

    schema = tool.tool_call_schema
    fields = getattr(schema, "model_fields", None) or {}
    for field_name, info in fields.items():
        try:
            TypeAdapter(info.annotation).json_schema()
        except Exception:
            kind = getattr(info.annotation, "__name__", str(info.annotation))
            msg = (
                f"{label}(): parameter {field_name!r} is a {kind}, which the model cannot send "
                f"(it sends JSON). Use {_JSON_TYPES}; for a DataFrame or another object, take "
                "its variable name as str and look it up in the function."
            )
            raise ValueError(msg) from None
    try:
        if fields and isinstance(schema, type) and issubclass(schema, BaseModel):
            schema.model_json_schema()  # `model_fields` were found: a pydantic 2 model
    except Exception as exc:
        msg = f"{label}() cannot be offered as a tool: its argument schema fails: {exc}"
        raise ValueError(msg) from None


def _printing_into_result(func: Callable[..., object]) -> Callable[..., object]:
    """`func`, with what it prints or displays during a call added to its result."""
    from jupyter_deepagent.jupyter.tools.output_routing import capture_thread_output

    @functools.wraps(func)
    def call(*args: object, **kwargs: object) -> object:
        with capture_thread_output() as captured:
            result = func(*args, **kwargs)
        shown = [data.get("text/plain", "") for data, _ in captured.displays]
        printed = "".join([captured.text, *(f"{text}\n" for text in shown if text)])
        if not printed.strip():
            return result
        return _with_printed(result, printed)

    return call


def _with_printed(result: object, printed: str) -> str:
    if result is None:
        return printed.rstrip("\n")
    if isinstance(result, str):
        text = result
    else:
        try:
            text = json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(result)
    return f"{text}\n\nprinted:\n{printed.rstrip()}"
