"""The kernel's end of the JupyterLab sidebar: the comm target `%load_ext` registers, the replies
to the sidebar's requests, the live updates of a running `%%agent` cell, and messages that are
malformed or hostile (an error reply each, never an exception in the kernel).

The kernel is a real IPython shell with a fake kernel object (its comm manager records the
target) and fake comms that record what the kernel sends.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from notebook_shell import Notebook, _with_memory_history
from IPython.core.interactiveshell import InteractiveShell

from jupyter_deepagent.jupyter.sidebar import channel as inspector_comm
from jupyter_deepagent.jupyter.sidebar.protocol import PROTOCOL_VERSION, TARGET

FIXTURE = Path(__file__).parent / "fixtures" / "inspector_lab"
SETUP = '''
from langchain.tools import tool
from jupyter_deepagent.jupyter.magic.magics import get_session

@tool
def station_table(region: str) -> str:
    """The measurements of every station of a region, as CSV."""
    rows = [f"{region}-{i:04d},{-9 + i % 10 * 0.9:.1f},{0.1 + i % 7 * 0.1:.1f}" for i in range(5000)]
    return "station,ground_temp_c,warming_per_decade_c\\n" + "\\n".join(rows)

get_session().tools.append(station_table)
'''
AGAIN = "%agent config model=scripted:scripts/again.yaml"  # a fresh script for a second run
RUN = ("%%agent --skills skills/\n"
       "Which Arctic station warms fastest? Follow the station-report skill.")


class FakeCommManager:
    def __init__(self) -> None:
        self.targets: dict[str, Any] = {}

    def register_target(self, name: str, handler: Any) -> None:
        self.targets[name] = handler

    def unregister_target(self, name: str, handler: Any) -> None:
        if self.targets.get(name) == handler:
            del self.targets[name]


class FakeKernel:
    def __init__(self) -> None:
        self.comm_manager = FakeCommManager()


class FakeComm:
    """A comm as ipykernel hands it to the target: records what the kernel sends."""

    def __init__(self, broken: bool = False) -> None:
        self.sent: list[dict[str, Any]] = []
        self.broken = broken
        self.closed = False
        self._on_msg: Any = None
        self._on_close: Any = None

    def on_msg(self, callback: Any) -> None:
        self._on_msg = callback

    def on_close(self, callback: Any) -> None:
        self._on_close = callback

    def send(self, data: dict[str, Any]) -> None:
        if self.broken:
            msg = "the browser went away"
            raise OSError(msg)
        self.sent.append(data)

    def close(self) -> None:
        self.closed = True

    def deliver(self, data: Any) -> dict[str, Any]:
        """Send `data` from the browser; return the one reply it got."""
        before = len(self.sent)
        self._on_msg({"content": {"data": data}})
        assert len(self.sent) == before + 1, self.sent[before:]
        return self.sent[-1]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["type"] == kind]


class KernelNotebook(Notebook):
    """A notebook whose shell has a kernel with a comm manager, as in JupyterLab."""

    def _start(self) -> InteractiveShell:
        InteractiveShell.clear_instance()
        shell = _with_memory_history(InteractiveShell.instance)
        shell.kernel = FakeKernel()
        shell.user_ns["__session__"] = str(self.path)
        shell.run_line_magic("load_ext", "jupyter_deepagent")
        return shell

    def open_sidebar(self, data: Any = None, comm: FakeComm | None = None) -> FakeComm:
        comm = comm or FakeComm()
        handler = self.shell.kernel.comm_manager.targets[TARGET]
        handler(comm, {"content": {"data": data, "comm_id": "c1", "target_name": TARGET}})
        return comm


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KernelNotebook]:
    folder = tmp_path / "lab"
    shutil.copytree(FIXTURE, folder)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    shutil.copy(folder / "scripts" / "inspector.yaml", folder / "scripts" / "again.yaml")
    made = KernelNotebook(folder, "inspector.ipynb")
    made.run(SETUP)
    made.run("%agent config model=scripted:scripts/inspector.yaml")
    yield made
    made.stop()


def request(ident: str = "r1", **fields: Any) -> dict[str, Any]:
    return {"protocol": PROTOCOL_VERSION, "type": "request", "id": ident, **fields}


def test_load_ext_registers_the_target_and_a_new_sidebar_gets_the_thread_list(
    lab: KernelNotebook,
) -> None:
    comm = lab.open_sidebar()
    [threads] = comm.sent
    assert threads["type"] == "threads" and threads["threads"] == []
    reply = comm.deliver(request(want="snapshot"))
    assert reply["type"] == "error" and reply["id"] == "r1"
    assert "no %%agent run in this kernel yet" in reply["message"]

    lab.stop()
    assert TARGET not in lab.shell.kernel.comm_manager.targets  # %unload_ext drops it
    assert comm.closed
    lab.shell = lab._start()


def test_a_running_cell_streams_events_and_live_snapshots_then_the_final_one(
    lab: KernelNotebook,
) -> None:
    comm = lab.open_sidebar(request("hello", want="threads"))
    assert comm.sent[0]["id"] == "hello"
    cell = lab.run(RUN)
    assert cell.error is None, cell.stderr

    events = [m["event"] for m in comm.of_type("event")]
    kinds = {e["type"] for e in events}
    assert {"run_started", "model_call", "tool_call", "skill_loaded", "offloaded",
            "run_finished"} <= kinds
    assert all(m["thread"] == "inspector" for m in comm.of_type("event"))
    snapshots = comm.of_type("snapshot")
    live = [s for s in snapshots if s["live"]]
    assert live, "no snapshot while the cell ran"
    final = snapshots[-1]
    assert final["live"] is False and final["id"] is None
    assert (final["thread"], final["run"], final["runs"]) == ("inspector", 1, 1)
    html = final["html"]
    assert 'data-section="skills"' in html and "station-report" in html
    assert 'data-loaded="yes"' in html and 'class="jdi-gauge"' in html
    assert 'data-kind="offloaded"' in html and "/large_tool_results/" in html
    # the offloaded artifact is on disk inside the notebook's folder: the sidebar can open it
    [(virtual, local)] = [(v, p) for v, p in final["files"].items()
                          if v.startswith("/large_tool_results/")]
    assert local.startswith(".deepagent/artifacts/large_tool_results/")
    assert (lab.folder / local).read_text().startswith("station,ground_temp_c")
    threads = comm.of_type("threads")
    assert threads[-1]["threads"] == [{"name": "inspector", "runs": 1, "live": False}]
    assert any(t["threads"] and t["threads"][0]["live"] for t in threads)


def test_an_earlier_run_of_a_thread_can_be_asked_for(lab: KernelNotebook) -> None:
    assert lab.run(RUN).error is None
    lab.run(AGAIN)
    assert lab.run(RUN).error is None
    comm = lab.open_sidebar()
    assert comm.sent[0]["threads"] == [{"name": "inspector", "runs": 2, "live": False}]
    first = comm.deliver(request("a", want="snapshot", thread="inspector", run=1))
    last = comm.deliver(request("b", want="snapshot", thread=None, run=-1))
    assert (first["id"], first["run"], first["runs"]) == ("a", 1, 2)
    assert (last["id"], last["run"]) == ("b", 2)
    assert "changed since the previous run" in last["html"] or \
        "unchanged since the previous run" in last["html"]
    missing = comm.deliver(request("c", want="snapshot", thread="nope", run=-1))
    assert missing["type"] == "error" and "threads with runs: inspector" in missing["message"]
    beyond = comm.deliver(request("d", want="snapshot", thread="inspector", run=7))
    assert beyond["type"] == "error" and "runs 1 to 2" in beyond["message"]


HOSTILE = [
    None, "snapshot", 42, [], {},
    {"protocol": 2, "type": "request", "id": "x", "want": "threads"},
    {"protocol": True, "type": "request", "id": "x", "want": "threads"},
    {"protocol": "1", "type": "request", "id": "x", "want": "threads"},
    request(want="threads", type="snapshot"),
    request(want="__class__"),
    request(want="snapshot", thread=5),
    request(want="snapshot", thread=""),
    request(want="snapshot", thread="main\x00../../etc"),
    request(want="snapshot", thread="t" * 500),
    request(want="snapshot", run="1"),
    request(want="snapshot", run=True),
    request(want="snapshot", run=0),
    request(want="snapshot", run=10**30),
    request(want="snapshot", run=1.5),
    request("x" * 100, want="threads"),
    {"protocol": 1, "type": "request", "id": ["x"], "want": "threads"},
    request(want="threads", padding="x" * 100_000),
]


@pytest.mark.parametrize("data", HOSTILE, ids=range(len(HOSTILE)))
def test_a_malformed_or_hostile_message_gets_an_error_reply_and_the_kernel_goes_on(
    lab: KernelNotebook, data: Any,
) -> None:
    comm = lab.open_sidebar()
    reply = comm.deliver(data)
    assert reply["type"] == "error" and reply["protocol"] == PROTOCOL_VERSION
    assert reply["message"] and len(reply["message"]) < 400
    assert comm.deliver(request("next", want="threads"))["type"] == "threads"


def test_a_message_that_is_not_a_comm_message_or_nested_too_deep_is_answered_too(
    lab: KernelNotebook,
) -> None:
    comm = lab.open_sidebar()
    for raw in (None, "text", {"content": None}, {"content": {"data": None}}):
        before = len(comm.sent)
        comm._on_msg(raw)
        assert comm.sent[before]["type"] == "error"
    deep: Any = "x"
    for _ in range(100_000):
        deep = {"protocol": 1, "nested": deep}
    assert comm.deliver(deep)["type"] == "error"


def test_a_failing_answer_is_an_error_reply_and_a_broken_comm_does_not_stop_the_run(
    lab: KernelNotebook, monkeypatch: pytest.MonkeyPatch,
) -> None:
    lab.run(RUN)
    comm = lab.open_sidebar()

    def broken(*args: Any, **kwargs: Any) -> Any:
        msg = "the view failed"
        raise RuntimeError(msg)

    monkeypatch.setattr(inspector_comm.SidebarChannel, "_snapshot", broken)
    reply = comm.deliver(request(want="snapshot"))
    assert reply["type"] == "error" and "the view failed" in reply["message"]
    monkeypatch.undo()

    gone = lab.open_sidebar(comm=FakeComm(broken=True))  # the browser closed its tab
    lab.run(AGAIN)
    cell = lab.run(RUN)
    assert cell.error is None
    channel = lab.shell.magics_manager.registry["AgentMagics"].sidebar
    assert gone not in channel.comms and comm in channel.comms
    assert comm.of_type("snapshot")[-1]["runs"] == 2


def test_a_runs_file_can_be_read_but_nothing_else_in_the_folder(lab: KernelNotebook) -> None:
    (lab.folder / ".env").write_text("GOOGLE_API_KEY=do-not-show\n")
    (lab.folder / "notes.md").write_text("private notes\n")
    assert lab.run(RUN).error is None
    comm = lab.open_sidebar()
    final = comm.deliver(request("s", want="snapshot"))
    [virtual] = [v for v in final["files"] if v.startswith("/large_tool_results/")]
    reply = comm.deliver(request("f", want="file", path=virtual))
    assert reply["type"] == "file" and reply["local"] == final["files"][virtual]
    assert reply["text"].startswith("station,ground_temp_c") and reply["truncated"] is False
    for path in ("/workspace/.env", "/workspace/notes.md", "/workspace/../../../etc/passwd",
                 "/large_tool_results/../../../.env", "/memories/x", "relative.txt", 7):
        refused = comm.deliver(request("g", want="file", path=path))
        assert refused["type"] == "error", path
        assert "do-not-show" not in str(refused) and "private notes" not in str(refused)


def test_a_flood_of_requests_is_dropped_unanswered_and_the_sidebar_is_answered_again_after(
    lab: KernelNotebook, monkeypatch: pytest.MonkeyPatch,
) -> None:
    lab.run(RUN)
    clock = [1000.0]  # the flood arrives within one window, however slow this machine is
    monkeypatch.setattr(inspector_comm, "_now", lambda: clock[0])
    comm = lab.open_sidebar()
    before = len(comm.sent)
    for index in range(10_000):
        comm._on_msg({"content": {"data": request(f"r{index}", want="snapshot")}})
    replies = comm.sent[before:]
    assert len(replies) == 10_000  # every request gets a reply: the sidebar never waits forever
    answered = [reply for reply in replies if reply["type"] == "snapshot"]
    assert len(answered) == inspector_comm.REQUEST_BURST
    dropped = [reply for reply in replies if reply["type"] == "error"]
    assert len(dropped) == 10_000 - len(answered)
    assert "dropped unanswered" in dropped[0]["message"] and dropped[0]["id"] == f"r{len(answered)}"
    assert all("html" not in reply for reply in dropped)
    clock[0] += inspector_comm.REQUEST_WINDOW
    assert comm.deliver(request("later", want="snapshot"))["type"] == "snapshot"
    other = lab.open_sidebar()  # a flood on one comm does not silence another sidebar
    assert other.sent[-1]["type"] == "threads"


def test_at_most_max_sidebars_comms_stay_open_and_the_next_is_told_why_and_closed(
    lab: KernelNotebook,
) -> None:
    comms = [lab.open_sidebar() for _ in range(inspector_comm.MAX_SIDEBARS)]
    assert all(comm.sent[-1]["type"] == "threads" and not comm.closed for comm in comms)
    extra = lab.open_sidebar()
    assert extra.closed and extra.sent[-1]["type"] == "error"
    assert "sidebars are already connected" in extra.sent[-1]["message"]
    comms[0]._on_close({})  # one closes: a new one may connect
    assert not lab.open_sidebar().closed
