"""The sidebar's TypeScript protocol (`labextension/src/protocol.ts`) is generated from the Python
one, so the comm target, the protocol version and the messages cannot drift between the kernel and
the browser; the event fields the sidebar reads are fields run events have."""

from __future__ import annotations

from pathlib import Path

from sidebar_build import LABEXTENSION

from jupyter_deepagent.events.schema import EVENT_DEFINITIONS
from jupyter_deepagent.jupyter.sidebar import protocol
from jupyter_deepagent.jupyter.sidebar.typescript import main, protocol_typescript

FIX = "python -m jupyter_deepagent.jupyter.sidebar.typescript labextension/src/protocol.ts"


def test_the_sidebars_typescript_protocol_is_generated_from_the_python_protocol(
    tmp_path: Path,
) -> None:
    committed = (LABEXTENSION / "src" / "protocol.ts").read_text(encoding="utf-8")
    assert committed == protocol_typescript(), f"regenerate it: {FIX}"
    assert f"export const TARGET = {protocol.TARGET!r};".replace("'", '"') in committed
    assert f"export const PROTOCOL_VERSION = {protocol.PROTOCOL_VERSION};" in committed
    union = committed.split("export type KernelMessage =", 1)[1]
    for message in (protocol.RequestMessage, *protocol.KERNEL_MESSAGES):
        assert f"export interface {message.__name__} {{" in committed
        assert (f"  | {message.__name__}" in union) == (message is not protocol.RequestMessage)
    assert '  want: "threads" | "snapshot" | "file";' in committed
    assert "  type: RunEventType;" in committed  # the event's type, from events.ts
    assert "  thread?: string | null;" in committed  # NotRequired: optional

    written = tmp_path / "protocol.ts"
    assert main([str(written)]) == 0
    assert written.read_text(encoding="utf-8") == committed


def test_the_event_fields_the_sidebar_reads_are_fields_of_run_events() -> None:
    fields = {
        name for definition in EVENT_DEFINITIONS.values() for name in definition.__annotations__
    }
    for cls in EVENT_DEFINITIONS.values():
        for base in cls.__mro__:
            fields |= set(getattr(base, "__annotations__", {}))
    read = set(protocol.RunEventFields.__annotations__)
    assert read <= fields, f"no run event has {sorted(read - fields)}"
    event = {"type": "tool_call", "step": 3, "tool": "x" * 300, "args": {"big": 1}, "agent": None}
    sent = protocol.event_message("t", event)
    assert sent["event"] == {"type": "tool_call", "step": 3, "tool": "x" * 199 + "…", "agent": None}
