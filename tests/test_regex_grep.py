"""grep with regex=True: a pattern that backtracks without end stops with an error the model reads,
instead of freezing the kernel; literal grep is unchanged.

Python's `re` holds the interpreter while it backtracks, so a freeze cannot be caught in-process:
the searches that could hang run once in a child interpreter, under a generous time limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_deepagent import BackendError
from jupyter_deepagent.backends.state import StateBackend

LINE = "a" * 40 + "!"

_CHILD = r"""
import asyncio, json, sys
from langchain.tools import ToolRuntime
from langgraph.types import Command
from jupyter_deepagent.backends.state import StateBackend
from jupyter_deepagent.harness.tools.filesystem import filesystem_tools

line = sys.argv[1]
tools = {t.name: t for t in filesystem_tools(StateBackend())}
state = {"files": {}}

def runtime():
    return ToolRuntime(state=state, context=None, config={}, stream_writer=lambda _: None,
                       tool_call_id="call-1", store=None)

def text(result):
    if isinstance(result, Command):
        state["files"].update(result.update["files"])
        result = result.update["messages"][0]
    return getattr(result, "content", result)

text(tools["write_file"].invoke(
    {"file_path": "/log.txt", "content": "ok\n" + line + "\n", "runtime": runtime()}))
async def catastrophic_async():
    from jupyter_deepagent.backends.matching import _matching
    _matching.REGEX_TIME_BUDGET = 0.3  # the same stop, sooner
    return text(await tools["grep"].ainvoke(grep("(a|aa)+$")))

grep = lambda pattern: {"pattern": pattern, "regex": True, "output_mode": "content",
                        "runtime": runtime()}
print(json.dumps({
    "nested": text(tools["grep"].invoke(grep("^(a+)+$"))),
    "catastrophic": text(tools["grep"].invoke(grep("(a|aa)+$"))),
    "catastrophic_async": asyncio.run(catastrophic_async()),
}))
"""


@pytest.fixture(scope="module")
def child_greps() -> dict[str, Any]:
    """The grep tool's answers to patterns that would hang `re`, from a child interpreter."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, LINE],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=Path(__file__).resolve().parents[1],
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a regex grep froze the interpreter (no answer within 120 s)")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_nested_repeat_over_a_long_line_answers_at_once(child_greps: dict[str, Any]) -> None:
    assert child_greps["nested"] == "No matches for '^(a+)+$' in /."


def test_catastrophic_backtracking_stops_with_an_error_the_model_reads(
    child_greps: dict[str, Any],
) -> None:
    answer = child_greps["catastrophic"]
    assert answer.startswith("Error: the regular expression '(a|aa)+$' took too long")
    assert "catastrophic backtracking" in answer
    assert "regex=False" in answer  # what to do instead


def test_catastrophic_backtracking_stops_in_the_async_tool_too(
    child_greps: dict[str, Any],
) -> None:
    assert "took too long" in child_greps["catastrophic_async"]


def test_literal_grep_finds_the_pattern_text_itself() -> None:
    backend = StateBackend()
    backend.write("/notes.md", f"{LINE}\nthe regex ^(a+)+$ is a classic\n")
    matches = backend.grep("^(a+)+$", "/")
    assert [(m.line_number, m.line) for m in matches] == [(2, "the regex ^(a+)+$ is a classic")]


def test_regex_grep_still_matches_python_syntax() -> None:
    backend = StateBackend()
    backend.write("/data.csv", "id,value\n1,42\n2,x\n3,7\n")
    matches = backend.grep(r"^(?P<id>\d+),\d+$", "/", regex=True)
    assert [m.line for m in matches] == ["1,42", "3,7"]


def test_invalid_regex_names_the_pattern_and_the_literal_option() -> None:
    backend = StateBackend()
    backend.write("/a.md", "x\n")
    with pytest.raises(BackendError, match=r"invalid regular expression '\(a'.*regex=False"):
        backend.grep("(a", "/", regex=True)
