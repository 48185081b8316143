"""`trace_remote_run`: a run of an agent served by LangGraph Server, collected as a `RunTrace`.

The served agent writes its run events to LangGraph's custom stream; the client asks the server
for that stream (with the state's values and updates) through LangGraph's `RemoteGraph`, checks
each event against the schema, and records the run as `trace_run` records a local one:
`run_started` first, then the server's events, then `answer` and `run_finished`, each masked and
stamped with the run's id and `seq`. So `trace.final_text`, `trace.events`,
`trace.results_frame()` and `results_frame(events)` work on a remote run. One difference: the
server knows no `trace_run`, so every `prompt` event carries its whole assembly (locally, a prompt
sent again is only its hash), and warnings are not kept to one per run (see
`jupyter_deepagent.events`: on a plain custom stream, only the main agent gives them).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from jupyter_deepagent.events import RunEvent, validate_event
from jupyter_deepagent.harness.run_events.event_stream import current_sink
from jupyter_deepagent.trace.run_trace import RunTrace, traced

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.pregel.remote import RemoteGraph
    from langgraph.types import Interrupt, StateSnapshot
    from langgraph_sdk.client import SyncLangGraphClient

__all__ = ["trace_remote_run"]

_STREAM_MODES = ["values", "updates", "custom"]


def _remote_graph(client: SyncLangGraphClient | RemoteGraph, assistant_id: str) -> RemoteGraph:
    """A `RemoteGraph` of `assistant_id` (a graph name of `langgraph.json`, or an assistant's id)
    through a `langgraph_sdk` sync client; a `RemoteGraph` is returned as it is.

    Raises:
        TypeError: `client` is neither a sync `langgraph_sdk` client nor a `RemoteGraph`.
    """
    from langgraph.pregel.remote import RemoteGraph
    from langgraph_sdk.client import SyncLangGraphClient

    if isinstance(client, RemoteGraph):
        return client
    if not isinstance(client, SyncLangGraphClient):
        msg = (
            "trace_remote_run takes the server's URL (e.g. http://127.0.0.1:2024), a client from "
            "langgraph_sdk.get_sync_client(url=...) or a RemoteGraph, not a "
            f"{type(client).__name__}"
        )
        raise TypeError(msg)
    return RemoteGraph(assistant_id, sync_client=client)


def _checked_thread(thread_id: str | None) -> str | None:
    """The thread id, which LangGraph Server wants as a UUID.

    Raises:
        ValueError: It is not a UUID.
    """
    if thread_id is None:
        return None
    try:
        return str(uuid.UUID(str(thread_id)))
    except ValueError:
        msg = (
            f"thread_id {thread_id!r}: LangGraph Server names threads by UUID. Create one with "
            "client.threads.create() (langgraph_sdk), or pass str(uuid.uuid4())."
        )
        raise ValueError(msg) from None


def _received(chunk: object) -> RunEvent:
    """A custom-stream chunk checked as a run event (its type and every field's type).

    Raises:
        ValueError: The chunk is not a run event of this schema (another version of the package
            on the server, or something else writing to the custom stream).
    """
    try:
        validate_event(chunk)
    except ValueError as exc:
        msg = (
            f"the server sent a custom-stream item that is not a run event of this schema: {exc}. "
            "Check that the server runs the same jupyter-deepagent version as this client."
        )
        raise ValueError(msg) from None
    return cast("RunEvent", dict(cast("RunEvent", chunk)))


def _as_messages(state: Mapping[str, object]) -> dict[str, object]:
    """The state's values with its messages (JSON from the server) as LangChain messages."""
    from langchain_core.messages import convert_to_messages

    values = dict(state)
    messages = values.get("messages")
    if isinstance(messages, list):
        values["messages"] = convert_to_messages(messages)
    return values


def _as_interrupts(items: object) -> list[Interrupt]:
    """The server's interrupts (JSON) as LangGraph `Interrupt`s, as a local run has them."""
    from langgraph.types import Interrupt

    return [
        Interrupt(value=item.get("value"), id=str(item.get("id", "")))
        if isinstance(item, Mapping)
        else item
        for item in cast("list[Interrupt | Mapping[str, object]]", items or [])
    ]


class _RemoteAgent:
    """A `RemoteGraph` as the tracer reads an agent: its thread's state holds LangChain messages
    and `Interrupt`s (the server sends JSON), so a resume names the calls it answers."""

    def __init__(self, graph: RemoteGraph) -> None:
        self.graph = graph
        self.config = graph.config

    def get_state(self, config: RunnableConfig) -> StateSnapshot:
        snapshot = self.graph.get_state(config)
        return snapshot._replace(
            values=_as_messages(snapshot.values or {}),
            interrupts=tuple(_as_interrupts(snapshot.interrupts)),
        )


def trace_remote_run(
    client_or_url: str | SyncLangGraphClient | RemoteGraph,
    assistant_id: str,
    input: object,
    *,
    thread_id: str | None = None,
    context: object = None,
    config: dict[str, Any] | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
    redact: Callable[[str], str] | None = None,
) -> RunTrace:
    """Run a served agent and collect its run events, as `trace_run` does for a local one.

    Args:
        client_or_url: The server's URL, a `langgraph_sdk` sync client (`get_sync_client`), or
            a `RemoteGraph`.
        assistant_id: The graph's name in `langgraph.json` (`agent` for the files
            `jupyter-deepagent serve-config` writes), or an assistant's id.
        input: The run's input (`{"messages": [...]}`), or a resume `Command`.
        thread_id: The server thread to run on, a UUID (created if new); None for a run
            without a thread (nothing kept on the server).
        context: The runtime context passed to the run.
        config: More run config (its `configurable` is merged with the thread id).
        on_event: Called with each event as it arrives (after masking and stamping).
        redact: Masks secrets in every string of every event.

    Returns:
        The `RunTrace`: events (`run_started` ... `run_finished`), the final state's values (its
        messages as LangChain messages) and any interrupts waiting for approval.

    Raises:
        TypeError: `client_or_url` is not a URL, a sync client or a `RemoteGraph`.
        ValueError: `thread_id` is not a UUID, or the server sent a custom-stream item that is
            not a run event.
        BaseException: Whatever the run raised (an HTTP error, the server's error for the run,
            a KeyboardInterrupt), after `run_finished` recorded it; the partial trace is
            attached as `exc.trace`.
    """
    thread = _checked_thread(thread_id)
    run_config: dict[str, Any] = dict(config or {})
    if thread is not None:
        run_config["configurable"] = {**run_config.get("configurable", {}), "thread_id": thread}
    options: dict[str, Any] = {"stream_mode": _STREAM_MODES, "version": "v2"}
    if context is not None:
        options["context"] = context
    trace = RunTrace()
    with _connected(client_or_url) as client:
        graph = _remote_graph(client, assistant_id)
        state_config = run_config if thread is not None else None
        agent = _RemoteAgent(graph)
        with traced(trace, agent, input, state_config, on_event, redact) as absorb:
            sink = current_sink()
            for part in graph.stream(input, _runnable(run_config), **options):
                mode: str = part["type"]
                chunk: object = part["data"]
                if mode == "custom":
                    if sink is not None:
                        sink(_received(chunk))
                elif mode == "values" and isinstance(chunk, Mapping):
                    absorb(mode, _as_messages(chunk))
                elif mode == "updates" and isinstance(chunk, Mapping) and "__interrupt__" in chunk:
                    absorb(mode, {"__interrupt__": _as_interrupts(chunk["__interrupt__"])})
    return trace


def _runnable(config: dict[str, Any]) -> RunnableConfig | None:
    """The run's config as LangGraph types it (None when empty)."""
    return cast("RunnableConfig", config) if config else None


@contextmanager
def _connected(
    client_or_url: str | SyncLangGraphClient | RemoteGraph,
) -> Iterator[SyncLangGraphClient | RemoteGraph]:
    """The client to use: a new one for a URL (closed after the run), else the one given."""
    if not isinstance(client_or_url, str):
        yield client_or_url
        return
    from langgraph_sdk import get_sync_client

    with get_sync_client(url=client_or_url) as client:
        yield client
