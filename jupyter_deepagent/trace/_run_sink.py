"""The sink of one traced run: every event is masked, stamped and checked here, once, before any
consumer sees it; and the events only the tracer can know (start, approvals, answer, end)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from jupyter_deepagent.events import APPROVAL_DECIDED, APPROVAL_REQUESTED, RunEvent, stamped
from jupyter_deepagent.harness.run_events.event_stream import emit_event, summarize_args

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import StateSnapshot

__all__ = [
    "RunSink",
    "StatefulAgent",
    "emit_approval_decisions",
    "emit_approval_requests",
    "input_text",
    "masked",
]


_Value = TypeVar("_Value")
_MEMO_CHARS = 200
"""Texts up to this long are masked once per run (while the values to hide stay the same)."""
_MEMO_TEXTS = 4096
"""How many masked short texts a run remembers at most."""


class StatefulAgent(Protocol):
    """What the tracer reads from an agent besides its stream: the state a resume answers."""

    def get_state(self, config: RunnableConfig) -> StateSnapshot:
        """The thread's state (values, pending interrupts)."""
        ...


def masked(value: _Value, redact: Callable[[str], str]) -> _Value:
    """`value` with `redact` applied to every string inside it (keys included); a new object."""
    return cast("_Value", _masked(value, redact))


def _masked(value: object, redact: Callable[[str], str]) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {_masked(k, redact): _masked(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(item, redact) for item in value]
    return value


class RunSink:
    """Receives every event of one run, in order: builds the masked, stamped copy, keeps it in
    `events` and hands it to `on_event`. The event a producer built is never changed."""

    def __init__(
        self,
        run_id: str,
        events: list[RunEvent],
        on_event: Callable[[RunEvent], None] | None,
        redact: Callable[[str], str] | None,
    ) -> None:
        self.run_id, self.events, self.on_event, self.redact = run_id, events, on_event, redact
        self._lock = threading.RLock()  # an on_event that emits an event must not deadlock
        self._memo: tuple[tuple[str, ...], dict[str, str]] = ((), {})

    def _event_redactor(self, redact: Callable[[str], str]) -> Callable[[str], str]:
        """`redact` with the values to hide gathered once for this event (not once per text),
        and the short texts it masked before with the same values (keys, names) remembered."""
        frozen = getattr(redact, "frozen", None)
        if not callable(frozen):
            return redact
        now = frozen()
        values = tuple(now.values())
        if values != self._memo[0] or len(self._memo[1]) > _MEMO_TEXTS:
            self._memo = (values, {})
        memo = self._memo[1]

        def masked_text(text: str) -> str:
            if len(text) > _MEMO_CHARS:
                return str(now(text))
            found = memo.get(text)
            if found is None:
                found = memo[text] = str(now(text))
            return found

        return masked_text

    def __call__(self, event: RunEvent) -> None:
        if self.redact is not None:
            event = masked(event, self._event_redactor(self.redact))
        with self._lock:
            event = stamped(event, run_id=self.run_id, seq=len(self.events))
            self.events.append(event)
            if self.on_event is not None:
                self.on_event(event)


def input_text(payload: object) -> str:
    """The text of the last human message of a run's input; "resume" for a `Command` or None."""
    messages = payload.get("messages") if isinstance(payload, dict) else None
    if not messages:
        return "resume" if payload is None or not isinstance(payload, dict) else ""
    from langchain_core.messages import convert_to_messages

    try:
        converted = convert_to_messages(messages)
    except (ValueError, TypeError, NotImplementedError):
        return ""
    for message in reversed(converted):
        if message.type == "human":
            return str(message.text)
    return ""


def _action_requests(interrupt: object) -> list[tuple[dict[str, object], list[str]]]:
    """The human-in-the-loop action requests of one interrupt, with the decisions each allows."""
    value = getattr(interrupt, "value", None)
    if not isinstance(value, Mapping):
        return []
    allowed = {
        c.get("action_name"): list(c.get("allowed_decisions", []))
        for c in value.get("review_configs", [])
        if isinstance(c, Mapping)
    }
    return [
        (dict(action), allowed.get(action.get("name"), ["approve", "edit", "reject"]))
        for action in value.get("action_requests", [])
        if isinstance(action, Mapping)
    ]


def emit_approval_requests(interrupts: Iterable[object], step: int) -> None:
    """One `approval_requested` event per tool call the run paused on."""
    for interrupt in interrupts:
        for action, allowed in _action_requests(interrupt):
            emit_event(
                APPROVAL_REQUESTED,
                step=step,
                tool=str(action.get("name", "")),
                args=summarize_args(action.get("args", {})),
                description=str(action.get("description") or ""),
                allowed=allowed,
                interrupt_id=getattr(interrupt, "id", None),
            )


def emit_approval_decisions(
    agent: StatefulAgent,
    payload: object,
    config: Mapping[str, object] | None,
    events: list[RunEvent],
) -> None:
    """The `approval_decided` event of a resume `Command`, unless the caller already reported
    the decision in this run (the notebook does, saying whether a button or `%agent resume`
    answered)."""
    resume = getattr(payload, "resume", None)
    if not isinstance(resume, Mapping) or any(e["type"] == APPROVAL_DECIDED for e in events):
        return
    try:
        state = agent.get_state(cast("RunnableConfig", config)) if config else None
    except Exception:
        state = None
    interrupts = list(getattr(state, "interrupts", None) or [])
    by_id = {getattr(i, "id", None): i for i in interrupts}
    if "decisions" in resume:
        answers = [(interrupts[0] if len(interrupts) == 1 else None, resume)]
    else:
        answers = [(by_id.get(key), value) for key, value in resume.items()]
    kinds: list[str] = []
    actions: list[dict[str, object]] = []
    edits: dict[str, object] = {}
    message = None
    for interrupt, answer in answers:
        decisions = answer.get("decisions", []) if isinstance(answer, Mapping) else []
        requests = _action_requests(interrupt) if interrupt is not None else []
        for index, decision in enumerate(d for d in decisions if isinstance(d, Mapping)):
            edited = decision.get("edited_action") or {}
            actions.append(requests[index][0] if index < len(requests) else dict(edited))
            kinds.append(str(decision.get("type", "")))
            edits.update(edited.get("args") or {})
            message = message or decision.get("message")
    if not kinds:
        return
    emit_event(
        APPROVAL_DECIDED,
        decision=",".join(dict.fromkeys(kinds)),
        via="command",
        tools=[str(action.get("name", "")) for action in actions],
        tool_call_ids=_call_ids(state, actions),
        message=message,
        edits=summarize_args(edits) if edits else None,
    )


def _call_ids(state: object, actions: list[dict[str, object]]) -> list[str | None]:
    """The ids of the unanswered tool calls the actions ask about, matched by name and args."""
    messages = list((getattr(state, "values", None) or {}).get("messages", []))
    answered = {getattr(m, "tool_call_id", None) for m in messages if m.type == "tool"}
    last_ai = next((m for m in reversed(messages) if m.type == "ai"), None)
    calls = [c for c in getattr(last_ai, "tool_calls", None) or [] if c.get("id") not in answered]
    ids: list[str | None] = []
    for action in actions:
        wanted = (action.get("name"), action.get("args"))
        match = next((c for c in calls if (c["name"], c["args"]) == wanted), None)
        if match is not None:
            calls.remove(match)
        ids.append(match.get("id") if match is not None else None)
    return ids
