"""The ScriptedChatModel script format: steps, rules and script files, checked before any call.

A step is a string, an `AIMessage`, `{"content", "tool_calls", "usage"}` or `{"raise", "message"}`; a rule
is `{"when", "when_system", "reply", "repeat"}`; a script file is YAML or JSON holding a list of
steps or `{"script", "rules", "profile", "name"}`. Every error names the step, rule or file.
A script that runs out names which agent drew which step (`Draw`, `exhausted_error`): the model
is shared by the main agent and its subagents, and a subagent without a rule of its own takes the
next step, which was written for the main agent. The format is documented in
docs/scripted-models.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from langchain_core import exceptions as lc_errors
from langchain_core.messages import AIMessage, ToolCall
from langchain_core.messages.ai import UsageMetadata

from jupyter_deepagent._exceptions import ScriptError

__all__ = [
    "Draw",
    "Rule",
    "Step",
    "compile_rule",
    "compile_step",
    "exhausted_error",
    "read_script_file",
]

# what `{"raise": kind}` raises: LangChain's own provider-neutral error types
_ERRORS: dict[str, type[Exception]] = {
    "context_overflow": lc_errors.ContextOverflowError,
    "error": lc_errors.ModelAPIError,
    "rate_limit": lc_errors.ModelRateLimitError,
    "timeout": lc_errors.ModelTimeoutError,
}

# the cache counts a scripted reply may report (LangChain's `InputTokenDetails`)
_DETAIL_FIELDS: dict[str, tuple[type, ...]] = {"cache_read": (int,), "cache_creation": (int,)}


@dataclass(frozen=True)
class Step:
    """One reply: a message to send, or an error to raise."""

    reply: AIMessage | None = None
    error: type[Exception] | None = None
    error_message: str = ""


@dataclass
class Rule:
    """A reply given when the last message (and system message) hold the given text."""

    when: str | None
    when_system: str | None
    step: Step
    repeat: bool
    used: bool = False


def _check_fields(raw: Mapping[str, object], where: str, spec: dict[str, tuple[type, ...]]) -> None:
    """Reject unknown keys and values of the wrong type, naming where they are."""
    unknown = sorted(set(raw) - set(spec), key=str)
    if unknown:
        msg = f"{where} has unknown key {unknown[0]!r} (expected {', '.join(spec)})"
        raise ScriptError(msg)
    for key, types in spec.items():
        if key in raw and not isinstance(raw[key], types):
            expected = " or ".join(t.__name__ for t in types)
            msg = f"{where} has {key!r} of type {type(raw[key]).__name__}, expected {expected}"
            raise ScriptError(msg)


def _compile_tool_call(raw: object, where: str) -> ToolCall:
    if not isinstance(raw, Mapping):
        msg = f"{where} has type {type(raw).__name__}, expected a mapping with 'name' and 'args'"
        raise ScriptError(msg)
    _check_fields(raw, where, {"name": (str,), "args": (Mapping,), "id": (str,), "type": (str,)})
    if not raw.get("name"):
        msg = f"{where} has no 'name'"
        raise ScriptError(msg)
    return ToolCall(
        type="tool_call", name=raw["name"], args=dict(raw.get("args", {})), id=raw.get("id")
    )


def compile_step(raw: object, where: str) -> Step:
    """Check one script step and turn it into a Step.

    Raises:
        ScriptError: the step is malformed; the message starts with `where`.
    """
    if isinstance(raw, str):
        return Step(reply=AIMessage(content=raw))
    if isinstance(raw, AIMessage):
        return Step(reply=raw)
    if not isinstance(raw, Mapping):
        msg = f"{where} has type {type(raw).__name__}, expected a string, an AIMessage or a mapping"
        raise ScriptError(msg)
    if "raise" in raw:
        _check_fields(raw, where, {"raise": (str,), "message": (str,)})
        if raw["raise"] not in _ERRORS:
            msg = f"{where} has unknown raise kind {raw['raise']!r} (expected {', '.join(_ERRORS)})"
            raise ScriptError(msg)
        return Step(error=_ERRORS[raw["raise"]], error_message=raw.get("message", raw["raise"]))
    _check_fields(raw, where, {"content": (str, list), "tool_calls": (list,), "usage": (Mapping,)})
    if not set(raw) - {"usage"}:
        msg = f"{where} is empty: give 'content' and/or 'tool_calls'"
        raise ScriptError(msg)
    calls = [
        _compile_tool_call(c, f"{where}: tool_calls[{i}]")
        for i, c in enumerate(raw.get("tool_calls", []))
    ]
    reply = AIMessage(content=raw.get("content", ""), tool_calls=calls)
    if "usage" in raw:
        reply.usage_metadata = _compile_usage(raw["usage"], f"{where}: usage")
    return Step(reply=reply)


def _compile_usage(raw: Mapping[str, object], where: str) -> UsageMetadata:
    """A step's `usage`: token counts the reply reports instead of the model's estimate (the
    counts left out are estimated), e.g. `{"input_token_details": {"cache_read": 800}}`."""
    _check_fields(
        raw,
        where,
        {"input_tokens": (int,), "output_tokens": (int,), "input_token_details": (Mapping,)},
    )
    details = raw.get("input_token_details") or {}
    assert isinstance(details, Mapping)  # checked above
    _check_fields(details, f"{where}: input_token_details", _DETAIL_FIELDS)
    usage: dict[str, object] = {
        key: raw[key] for key in ("input_tokens", "output_tokens") if key in raw
    }
    if details:
        usage["input_token_details"] = dict(details)
    return cast("UsageMetadata", usage)  # partial: the model fills in what is left out


def compile_rule(raw: object, where: str) -> Rule:
    """Check one rule and turn it into a Rule.

    Raises:
        ScriptError: the rule or its reply is malformed; the message starts with `where`.
    """
    if not isinstance(raw, Mapping):
        msg = f"{where} has type {type(raw).__name__}, expected a mapping with 'when' and 'reply'"
        raise ScriptError(msg)
    _check_fields(
        raw, where, {"when": (str,), "when_system": (str,), "reply": (object,), "repeat": (bool,)}
    )
    if not raw.get("when") and not raw.get("when_system"):
        msg = f"{where} has neither 'when' nor 'when_system' (a non-empty substring to match)"
        raise ScriptError(msg)
    if "reply" not in raw:
        msg = f"{where} has no 'reply'"
        raise ScriptError(msg)
    step = compile_step(raw["reply"], f"{where}: reply")
    return Rule(raw.get("when"), raw.get("when_system"), step, raw.get("repeat", False))


def read_script_file(path: Path) -> dict[str, Any]:
    """Read a YAML or JSON script file into ScriptedChatModel keyword arguments.

    Raises:
        ScriptError: the file is missing, unreadable, of an unknown format, or not a list of
            steps or a mapping of known keys; the message names the file.
    """
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json"):
        msg = f"{path}: unknown script format {path.suffix!r}; use .yaml, .yml or .json"
        raise ScriptError(msg)
    try:
        text = path.read_text(encoding="utf-8")
        if suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:
        msg = f"{path}: cannot read the script: {exc}"
        raise ScriptError(msg) from exc
    data = {"script": data} if isinstance(data, list) else data
    if not isinstance(data, dict):
        msg = f"{path}: expected a list of steps or a mapping with 'script' and 'rules'"
        raise ScriptError(msg)
    _check_fields(
        data, str(path), {"script": (list,), "rules": (list,), "profile": (dict,), "name": (str,)}
    )
    return data


@dataclass(frozen=True)
class Draw:
    """One reply taken from the script: which call, which step or rule, for which agent."""

    call: int
    """The model call it answered (1-based, over every caller of the model)."""
    source: str
    """What answered: "step 3", or "a rule"."""
    agent: str | None
    """Who asked: "the main agent", "subagent 'researcher'", or None when not known."""
    task: str = ""
    """A subagent's task (its first human message), what a rule's `when` can match."""


def _calls(draws: list[Draw]) -> str:
    first, last = draws[0].call, draws[-1].call
    return f"call {first}" if first == last else f"calls {first}-{last}"


def _step_runs(draws: list[Draw]) -> list[str]:
    """The script steps drawn, as runs of consecutive steps by one agent."""
    runs: list[list[Draw]] = []
    for draw in (d for d in draws if d.source.startswith("step")):
        if runs and runs[-1][-1].agent == draw.agent:
            runs[-1].append(draw)
        else:
            runs.append([draw])
    described = []
    for run in runs:
        steps = (
            run[0].source if len(run) == 1 else f"steps {run[0].source[5:]}-{run[-1].source[5:]}"
        )
        task = f", task {run[0].task[:80]!r}" if run[0].task else ""
        described.append(f"{steps} by {run[0].agent or 'an unknown caller'} ({_calls(run)}{task})")
    return described


def exhausted_error(
    call: int, agent: str | None, steps: int, last: str, draws: list[Draw]
) -> ScriptError:
    """The error of a call no step or rule is left for, naming who drew the script's steps.

    Args:
        call: The model call that found the script exhausted (1-based).
        agent: Who made it ("the main agent", "subagent 'x'"), None when not known.
        steps: How many steps the script has.
        last: The text of the request's last message.
        draws: Every reply taken from the script so far, in call order.

    Returns:
        A `ScriptError` whose message names the cause and the fix.
    """
    who = f" ({agent})" if agent else ""
    parts = [
        f"ScriptedChatModel call {call}{who}: the script is exhausted ({steps} steps, all "
        f"played; no rule matched). Last message: {last[:200]!r}."
    ]
    runs = _step_runs(draws)
    if any(d.agent for d in draws):
        shown = runs if len(runs) <= 8 else ["...", *runs[-8:]]
        parts.append(f"Steps drawn: {'; '.join(shown)}.")
    eaters = [d for d in draws if d.source.startswith("step") and (d.agent or "").startswith("sub")]
    if eaters:
        eater = eaters[0]
        when = eater.task[:60] or "a phrase of its task"
        parts.append(
            f"A subagent draws the next script step as the main agent does, so {eater.agent} took "
            f"{eater.source}, which was written for the main agent. Give the subagent a rule that "
            f"matches its task, e.g. rules: [{{when: {when!r}, reply: '...'}}], or write its own "
            "steps at that place in the script (see docs/scripted-models.md)."
        )
    else:
        parts.append("Add a step to the script or a rule matching this message.")
    return ScriptError(" ".join(parts))
