"""OutputCapture: every cell's outputs as text, from kernel messages or from IPython's history."""

from __future__ import annotations

import base64
import struct
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from notebook_shell import shell  # noqa: F401

from jupyter_deepagent.jupyter.notebook_fs.output_capture import OutputCapture, OutputRecord

# -- a kernel's Session, faked at the `send` boundary ---------------------------------------------


class FakeSession:
    """Records what the kernel sends, with jupyter_client's `Session.send` signature."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def send(
        self,
        stream: Any,
        msg_or_type: Any,
        content: dict[str, Any] | None = None,
        parent: dict[str, Any] | None = None,
        ident: Any = None,
        buffers: Any = None,
        track: bool = False,
        header: Any = None,
        metadata: Any = None,
    ) -> dict[str, Any]:
        if isinstance(msg_or_type, dict):
            msg = msg_or_type
        else:
            msg = {
                "header": {"msg_type": msg_or_type, "msg_id": f"out-{len(self.sent)}"},
                "parent_header": (parent or {}).get("header", parent or {}),
                "content": content or {},
            }
        with self._lock:
            self.sent.append(msg)
        return msg


class FakeKernel:
    def __init__(self, running: dict[str, Any] | None = None) -> None:
        self.session = FakeSession()
        self._running = running or {}

    def get_parent(self, channel: str = "shell") -> dict[str, Any]:
        return self._running


class FakeKernelShell:
    """The parts of an ipykernel shell the capture touches (no history: every cell is live)."""

    def __init__(self, kernel: FakeKernel, execution_count: int = 1) -> None:
        self.kernel = kernel
        self.execution_count = execution_count


def request(n: int) -> dict[str, Any]:
    """An execute_request as the kernel's parent message."""
    return {"header": {"msg_id": f"req-{n}", "msg_type": "execute_request"}, "content": {}}


def png(width: int, height: int, size: int) -> str:
    """Base64 of a PNG-looking file: signature, IHDR with this size, padded to `size` bytes."""
    head = b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sII", 13, b"IHDR", width, height)
    return base64.b64encode(head + b"\0" * (size - len(head))).decode()


def jpeg(width: int, height: int) -> str:
    """Base64 of a JPEG-looking file: SOI, an APP0 segment, then SOF0 with the given size."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\0" * 9
    sof0 = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, height, width) + b"\0" * 10
    return base64.b64encode(b"\xff\xd8" + app0 + sof0).decode()


@pytest.fixture
def kernel_capture() -> Iterator[tuple[OutputCapture, FakeSession]]:
    kernel = FakeKernel()
    shell = FakeKernelShell(kernel)
    capture = OutputCapture.install(shell)
    yield capture, kernel.session
    capture.uninstall()


def send_cell(session: FakeSession, n: int, code: str) -> None:
    session.send(None, "execute_input", {"code": code, "execution_count": n}, parent=request(n))


def test_kernel_messages_become_each_cells_outputs(kernel_capture: Any) -> None:
    capture, session = kernel_capture
    send_cell(session, 1, "print('a'); 6*7")
    parent = request(1)
    session.send(None, "stream", {"name": "stdout", "text": "hel"}, parent=parent)
    session.send(None, "stream", {"name": "stdout", "text": "lo\n"}, parent=parent["header"])
    session.send(
        None, "stream", {"name": "stderr", "text": "\x1b[31mwarning\x1b[0m\n"}, parent=parent
    )
    image = {"image/png": png(640, 480, 12_000), "text/plain": "<Figure size 640x480>"}
    session.send(None, "display_data", {"data": image, "metadata": {}}, parent=parent)
    result = {
        "header": {"msg_type": "execute_result", "msg_id": "r1"},
        "parent_header": parent["header"],
        "content": {"execution_count": 1, "data": {"text/plain": "42"}, "metadata": {}},
    }
    session.send(None, result)  # the displayhook sends a whole message dict

    cell = capture.cell(1)
    assert cell is not None
    assert cell.source == "print('a'); 6*7"
    assert cell.outputs == [
        OutputRecord("stdout", "hello\n"),
        OutputRecord("stderr", "warning\n"),
        OutputRecord("display", "<Figure size 640x480>\n[image/png 640x480, 12 KB]"),
        OutputRecord("result", "42"),
    ]
    assert len(session.sent) == 6  # every message still reached the real send


def test_errors_keep_the_traceback_without_escape_codes(kernel_capture: Any) -> None:
    capture, session = kernel_capture
    send_cell(session, 3, "1/0")
    traceback = [
        "\x1b[31m---------------------------------------------------------------------------\x1b[39m",
        "\x1b[31mZeroDivisionError\x1b[39m  Traceback (most recent call last)",
        "Cell \x1b[32mIn[3]\x1b[39m, line 1\n----> 1 1/0\n",
        "\x1b[31mZeroDivisionError\x1b[39m: division by zero",
    ]
    content = {"ename": "ZeroDivisionError", "evalue": "division by zero", "traceback": traceback}
    session.send(None, "error", content, parent=request(3))

    text = capture.outputs_text(3)
    assert text.startswith("[error]\nZeroDivisionError: division by zero\n")
    assert "----> 1 1/0" in text
    assert "\x1b" not in text


def test_clear_output_clears_the_cells_record(kernel_capture: Any) -> None:
    capture, session = kernel_capture
    send_cell(session, 1, "loop")
    parent = request(1)
    session.send(None, "stream", {"name": "stdout", "text": "step 1\n"}, parent=parent)
    session.send(None, "clear_output", {"wait": False}, parent=parent)
    session.send(None, "stream", {"name": "stdout", "text": "step 2\n"}, parent=parent)
    session.send(None, "clear_output", {"wait": True}, parent=parent)
    assert capture.outputs_text(1) == "[stdout]\nstep 2\n"  # wait=True: cleared on next output
    session.send(None, "stream", {"name": "stdout", "text": "step 3\n"}, parent=parent)
    assert capture.outputs_text(1) == "[stdout]\nstep 3\n"


def test_updated_displays_and_progress_bars_show_their_last_state(kernel_capture: Any) -> None:
    capture, session = kernel_capture
    send_cell(session, 1, "h = display('v1', display_id=True)")
    shown = {"data": {"text/plain": "'v1'"}, "metadata": {}, "transient": {"display_id": "d1"}}
    session.send(None, "display_data", shown, parent=request(1))
    send_cell(session, 2, "h.update('v2'); tqdm")
    updated = {"data": {"text/plain": "'v2'"}, "metadata": {}, "transient": {"display_id": "d1"}}
    session.send(None, "update_display_data", updated, parent=request(2))
    for step in range(1, 101):
        session.send(None, "stream", {"name": "stderr", "text": f"\r{step}%"}, parent=request(2))

    assert capture.outputs_text(1) == "[display]\n'v2'\n"
    assert capture.outputs_text(2) == "[stderr]\n100%\n"


def test_images_are_described_not_dumped(kernel_capture: Any) -> None:
    capture, session = kernel_capture
    send_cell(session, 1, "show images")
    for data in (
        {"image/jpeg": jpeg(800, 600)},
        {"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'/>"},
        {"text/html": "<b>bold</b>"},
    ):
        session.send(None, "display_data", {"data": data, "metadata": {}}, parent=request(1))

    texts = [output.text for output in capture.cell(1).outputs]  # type: ignore[union-attr]
    assert texts == ["[image/jpeg 800x600, 39 B]", "[image/svg+xml, 41 B]", "[text/html, 11 B]"]


def test_messages_from_two_threads_are_all_recorded(kernel_capture: Any) -> None:
    capture, session = kernel_capture
    send_cell(session, 1, "threads")
    send_cell(session, 2, "more threads")

    def stream(n: int, name: str) -> None:
        for i in range(500):
            session.send(None, "stream", {"name": name, "text": f"{i}\n"}, parent=request(n))

    threads = [
        threading.Thread(target=stream, args=(1, "stdout")),  # the IOPub thread's flushes
        threading.Thread(target=stream, args=(1, "stderr")),
        threading.Thread(target=stream, args=(2, "stdout")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    first = capture.cell(1).outputs  # type: ignore[union-attr]
    for name in ("stdout", "stderr"):
        lines = "".join(o.text for o in first if o.kind == name).splitlines()
        assert lines == [str(i) for i in range(500)]
    assert capture.outputs_text(2).splitlines()[1:] == [str(i) for i in range(500)]
    assert len(session.sent) == 2 + 1500


def test_outputs_of_no_cell_are_ignored(kernel_capture: Any) -> None:
    capture, session = kernel_capture
    comm = {"header": {"msg_id": "comm-1", "msg_type": "comm_msg"}}
    session.send(None, "stream", {"name": "stdout", "text": "from a widget callback"}, parent=comm)
    session.send(None, "status", {"execution_state": "idle"}, parent=request(1))
    assert capture.cells() == []


def test_the_cell_running_at_install_time_is_recorded() -> None:
    running = request(5)
    kernel = FakeKernel(running=running)
    capture = OutputCapture.install(FakeKernelShell(kernel, execution_count=5))
    try:
        kernel.session.send(None, "stream", {"name": "stdout", "text": "late\n"}, parent=running)
        assert capture.outputs_text(5) == "[stdout]\nlate\n"
    finally:
        capture.uninstall()


def test_a_cell_records_at_most_max_chars_and_says_so(kernel_capture: Any) -> None:
    capture, session = kernel_capture
    capture.max_chars_per_cell = 100
    send_cell(session, 1, "flood")
    for _ in range(30):
        session.send(None, "stream", {"name": "stdout", "text": "x" * 9 + "\n"}, parent=request(1))
    outputs = capture.cell(1).outputs  # type: ignore[union-attr]
    assert outputs[0].text == ("x" * 9 + "\n") * 10
    assert outputs[-1] == OutputRecord("note", "200 more characters of output were not recorded")


def test_install_is_once_per_shell_and_uninstall_restores_send() -> None:
    kernel = FakeKernel()
    shell = FakeKernelShell(kernel)
    capture = OutputCapture.install(shell)
    assert OutputCapture.install(shell) is capture
    assert capture.captures_kernel_messages
    assert OutputCapture.install(FakeKernelShell(FakeKernel())) is not capture

    capture.uninstall()
    assert "send" not in vars(kernel.session)  # the class's own method is back
    assert OutputCapture.install(shell) is not capture
    OutputCapture.install(shell).uninstall()


# -- no kernel: IPython's own history -------------------------------------------------------------


def test_a_plain_shell_records_results_stdout_and_errors(shell: InteractiveShell) -> None:
    capture = OutputCapture.install(shell)
    assert not capture.captures_kernel_messages
    shell.run_cell("print('hello')", store_history=True)
    shell.run_cell("%time 6 * 7", store_history=True)
    shell.run_cell("1/0", store_history=True)
    shell.run_cell("x = 1", store_history=True)

    cells = capture.cells()
    assert [c.execution_count for c in cells] == [1, 2, 3, 4]
    assert cells[1].source == "%time 6 * 7"  # as typed, not the transformed Python
    assert capture.outputs_text(1) == "[stdout]\nhello\n"
    assert OutputRecord("result", "42") in cells[1].outputs
    assert capture.outputs_text(3).startswith("[error]\nZeroDivisionError: division by zero\n")
    assert "\x1b" not in capture.outputs_text(3)
    assert cells[3].outputs == []
    assert capture.cell(99) is None
    assert capture.outputs_text(99) == ""
