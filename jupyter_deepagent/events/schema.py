"""The registry of event types, the builder every event goes through, and what is generated from
the definitions: the field docs, the Markdown table and the JSON Schema.

`build_event` checks an event against its definition (an unknown type, a missing field or an
unexpected one is a `ValueError`) and is cheap enough for every event. `validate_event` also
checks each value's type (with pydantic, imported on first use) and is what the test suite runs
on every event it sees.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import sys
import time
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias, Union, cast, get_args

from jupyter_deepagent.events import budget, cells, context, run, subagents
from jupyter_deepagent.events.common import SCHEMA_VERSION, EventStamp

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = [
    "CHECK_EVENTS_VARIABLE",
    "COMMON_FIELDS",
    "EVENT_DEFINITIONS",
    "EVENT_TYPES",
    "RunEvent",
    "build_event",
    "check_events",
    "event_json_schema",
    "event_table",
    "field_docs",
    "stamped",
    "validate_event",
]

RunEvent: TypeAlias = Union[  # noqa: UP007 - a runtime union for pydantic and for readers
    run.RunStartedEvent,
    run.RunFinishedEvent,
    run.AnswerEvent,
    run.PromptEvent,
    run.ModelCallEvent,
    run.ModelRetryEvent,
    run.ToolCallEvent,
    run.ToolResultEvent,
    run.FileWrittenEvent,
    run.ApprovalRequestedEvent,
    run.ApprovalDecidedEvent,
    run.SkillLoadedEvent,
    run.MemoryLoadedEvent,
    run.TodosEvent,
    run.WarningEvent,
    context.ContextEvent,
    context.OffloadedEvent,
    context.AgedEvent,
    context.InputOffloadedEvent,
    context.SummarizedEvent,
    context.ContextOverflowEvent,
    context.CompactionRefusedEvent,
    subagents.SubagentStartedEvent,
    subagents.SubagentFinishedEvent,
    budget.BudgetReachedEvent,
    budget.BudgetDecidedEvent,
    cells.CellProposedEvent,
]
"""Any run event; the `type` field tells which."""

EVENT_DEFINITIONS: Final[dict[str, type]] = {
    get_args(typing.get_type_hints(definition)["type"])[0]: definition
    for definition in get_args(RunEvent)
}
"""Event type -> its TypedDict, in the order of `RunEvent`."""

EVENT_TYPES: Final = tuple(EVENT_DEFINITIONS)
"""Every event type."""

COMMON_FIELDS: Final = ("type", *EventStamp.__annotations__)
"""The fields every event has (`run_id` and `seq` only once `trace_run` stamped it)."""


class _TypedDictClass(Protocol):
    """What the registry reads from an event's TypedDict class: its keys."""

    __required_keys__: frozenset[str]
    __optional_keys__: frozenset[str]


_STAMP_ONLY: Final = frozenset({"run_id", "seq"})

CHECK_EVENTS_VARIABLE: Final = "JUPYTER_DEEPAGENT_CHECK_EVENTS"
"""Set to 1 in the environment to run `validate_event` on every event built or stamped (tests)."""

EventCheck: TypeAlias = Callable[[Mapping[str, object], bool], None]

_check: EventCheck | None = None


def check_events(check: EventCheck | None) -> None:
    """Run `check(event, stamped)` on every event `build_event` builds and `stamped` stamps
    (None: stop). The test suite installs one that validates each event against the schema."""
    global _check
    _check = check


def _raise_if_invalid(event: Mapping[str, object], stamped: bool) -> None:
    validate_event(event, stamped=stamped)


@cache
def _required(event_type: str) -> frozenset[str]:
    return frozenset(_definition(event_type).__required_keys__)


@cache
def _allowed(event_type: str) -> frozenset[str]:
    definition = _definition(event_type)
    return frozenset(definition.__required_keys__ | definition.__optional_keys__)


def _definition(event_type: str) -> _TypedDictClass:
    return cast("_TypedDictClass", EVENT_DEFINITIONS[event_type])


def _unknown_type(event_type: object) -> ValueError:
    return ValueError(
        f"unknown run event type {event_type!r}; the schema defines: {', '.join(EVENT_TYPES)}"
    )


def build_event(
    event_type: str, *, agent: str, task_id: str | None, step: int = 0, **fields: object
) -> RunEvent:
    """Build one event of `event_type` with the common fields, checked against its definition.

    Raises:
        ValueError: The type is not in the schema, a field of its definition is missing, or a
            field is not in its definition.
    """
    if event_type not in EVENT_DEFINITIONS:
        raise _unknown_type(event_type)
    event = {
        "schema": SCHEMA_VERSION,
        "type": event_type,
        "time": time.time(),
        "agent": agent,
        "task_id": task_id,
        "step": step,
        **fields,
    }
    _check_keys(event, stamped=False)
    if _check is not None:
        _check(event, False)
    return cast("RunEvent", event)


def stamped(event: RunEvent, *, run_id: str, seq: int) -> RunEvent:
    """A new event: `event` with its run's id and its position in the run."""
    copy = {**event, "run_id": run_id, "seq": seq}
    if _check is not None:
        _check(copy, True)
    return cast("RunEvent", copy)


def _check_keys(event: Mapping[str, object], *, stamped: bool) -> None:
    event_type = event.get("type")
    if not isinstance(event_type, str) or event_type not in EVENT_DEFINITIONS:
        raise _unknown_type(event_type)
    keys = set(event)
    missing = _required(event_type) - keys
    if stamped:
        missing |= _STAMP_ONLY - keys
    if missing:
        msg = f"{event_type} event without {', '.join(sorted(missing))}"
        raise ValueError(msg)
    extra = keys - _allowed(event_type)
    if extra:
        msg = f"{event_type} event with fields not in the schema: {', '.join(sorted(extra))}"
        raise ValueError(msg)


def validate_event(event: object, *, stamped: bool = False) -> None:
    """Check `event` against the schema: its type, its fields, each value's type, the schema
    version, and that it is plain JSON.

    Args:
        event: The event to check.
        stamped: Also require the `run_id` and `seq` that `trace_run` adds.

    Raises:
        ValueError: The event does not follow the schema; the message says how.
    """
    if not isinstance(event, dict):
        msg = f"a run event is a dict, not {type(event).__name__}"
        raise ValueError(msg)
    _check_keys(event, stamped=stamped)
    if event["schema"] != SCHEMA_VERSION:
        msg = f"{event['type']} event of schema {event['schema']!r}, expected {SCHEMA_VERSION}"
        raise ValueError(msg)
    try:
        json.dumps(event, allow_nan=False)
    except (TypeError, ValueError) as exc:
        msg = f"{event['type']} event is not plain JSON: {exc}"
        raise ValueError(msg) from None
    from pydantic import ValidationError

    try:
        _adapter(event["type"]).validate_python(event, strict=True)
    except ValidationError as exc:
        msg = f"{event['type']} event does not follow the schema: {exc}"
        raise ValueError(msg) from None


@cache
def _adapter(event_type: str) -> TypeAdapter[object]:
    from pydantic import TypeAdapter

    return TypeAdapter(EVENT_DEFINITIONS[event_type])


@cache
def field_docs(definition: type) -> dict[str, str]:
    """The docstring of each field of an event definition (the common ones first), read from the
    source, in definition order."""
    docs: dict[str, str] = {}
    for cls in (EventStamp, definition):
        module = sys.modules[cls.__module__]
        docs.update(_class_field_docs(inspect.getsource(module), cls.__name__))
    return docs


def _class_field_docs(source: str, name: str) -> dict[str, str]:
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            docs: dict[str, str] = {}
            body = node.body
            for index, item in enumerate(body):
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    following = body[index + 1] if index + 1 < len(body) else None
                    doc = ""
                    if (
                        isinstance(following, ast.Expr)
                        and isinstance(following.value, ast.Constant)
                        and isinstance(following.value.value, str)
                    ):
                        doc = " ".join(following.value.value.split())
                    docs[item.target.id] = doc
            return docs
    return {}


def _summary(definition: type) -> str:
    return " ".join((definition.__doc__ or "").split())


def event_table() -> str:
    """The Markdown table of every event type and its own fields, generated from the schema."""
    stamp = field_docs(EventStamp)
    lines = [
        "Every event has its `type` and:",
        "",
        *(f"- `{name}`: {doc}" for name, doc in stamp.items()),
        "",
        "| type | what it says | its own fields |",
        "|---|---|---|",
    ]
    for event_type, definition in EVENT_DEFINITIONS.items():
        own = {k: v for k, v in field_docs(definition).items() if k not in stamp and k != "type"}
        fields = " ".join(f"`{name}`: {doc}" for name, doc in own.items())
        lines.append(f"| `{event_type}` | {_summary(definition)} | {fields} |")
    return "\n".join(lines)


def event_json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of one run event: a union discriminated by `type`, every
    field described. Readers in other languages (the TypeScript sidebar) are built from it."""
    from pydantic import Field, TypeAdapter

    schema = TypeAdapter(typing.Annotated[RunEvent, Field(discriminator="type")]).json_schema(
        mode="serialization"
    )
    definitions = {cls.__name__: cls for cls in EVENT_DEFINITIONS.values()}
    for name, entry in schema.get("$defs", {}).items():
        definition = definitions.get(name)
        if definition is None:
            continue
        entry["description"] = _summary(definition)
        entry["additionalProperties"] = False
        docs = field_docs(definition)
        entry["properties"]["schema"]["const"] = SCHEMA_VERSION
        for field_name, prop in entry.get("properties", {}).items():
            if docs.get(field_name):
                prop["description"] = docs[field_name]
    schema["title"] = "RunEvent"
    schema["description"] = (
        f"A jupyter-deepagent run event, schema version {SCHEMA_VERSION}; `type` says which."
    )
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


if os.environ.get(CHECK_EVENTS_VARIABLE) == "1":
    check_events(_raise_if_invalid)
