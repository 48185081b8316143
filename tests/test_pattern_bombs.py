"""Patterns a model could send to freeze the kernel (an exponential glob, a brace bomb, a regex
that takes minutes and gigabytes to compile) get an answer or a clear tool error at once.

`re` and the `regex` package hold the interpreter while they work, so a freeze cannot be caught
in-process: the calls run once in a child interpreter, and a child that does not answer within a
generous limit fails the test.
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

_CHILD = r"""
import json
from langchain.tools import ToolRuntime
from langgraph.types import Command
from jupyter_deepagent.backends.state import StateBackend
from jupyter_deepagent.harness.tools.filesystem import filesystem_tools

tools = {t.name: t for t in filesystem_tools(StateBackend())}
state = {"files": {}}

def call(name, **args):
    runtime = ToolRuntime(state=state, context=None, config={}, stream_writer=lambda _: None,
                          tool_call_id="call-1", store=None)
    result = tools[name].invoke({**args, "runtime": runtime})
    if isinstance(result, Command):
        state["files"].update(result.update["files"])
        result = result.update["messages"][0]
    return getattr(result, "content", result)

call("write_file", file_path="/" + "a" * 250, content="x")
call("write_file", file_path="/notes.txt", content="aaaa\nbbbb\n")
print(json.dumps({
    "six_stars": call("glob", pattern="*a" * 6 + "b"),
    "six_stars_hit": call("glob", pattern="*a" * 6 + "*"),
    "brace_bomb": call("glob", pattern="{a,b}" * 18),
    "brace_bomb_grep_filter": call("grep", pattern="a", glob="{a,b}" * 18),
    "compile_bomb": call("grep", pattern="((a{1000}){1000}){1000}", regex=True),
    "ordinary_regex": call("grep", pattern="b{4}", regex=True, output_mode="content"),
}))
"""


@pytest.fixture(scope="module")
def answers() -> dict[str, Any]:
    """The tools' answers to the hostile patterns, from a child interpreter."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD],
            capture_output=True,
            text=True,
            timeout=90,
            cwd=Path(__file__).resolve().parents[1],
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a hostile pattern froze the interpreter (no answer within 90 s)")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_many_stars_against_a_long_name_answer_at_once(answers: dict[str, Any]) -> None:
    assert answers["six_stars"] == "No files match '*a*a*a*a*a*ab' under /."
    assert answers["six_stars_hit"] == "/" + "a" * 250


def test_a_brace_bomb_is_a_clear_tool_error(answers: dict[str, Any]) -> None:
    for key in ("brace_bomb", "brace_bomb_grep_filter"):
        assert answers[key].startswith("Error: the glob pattern '{a,b}{a,b}")
        assert "more than 1,000 alternatives" in answers[key]


def test_a_regex_compile_bomb_is_a_clear_tool_error(answers: dict[str, Any]) -> None:
    error = answers["compile_bomb"]
    assert error.startswith("Error: the regular expression '((a{1000}){1000}){1000}' is too large")
    assert "regex=False" in error


def test_ordinary_counted_repeats_still_work(answers: dict[str, Any]) -> None:
    assert answers["ordinary_regex"] == "/notes.txt:2: bbbb"


@pytest.mark.parametrize(
    "pattern",
    [
        r"\d{1,3}(\.\d{1,3}){3}",
        r"(?P<key>\w+)\s*=\s*(?P<value>.*)",
        r"[A-Z]{2,10}-\d{4}",
        r"\p{L}{3}",
    ],
)
def test_patterns_people_search_with_are_accepted(pattern: str) -> None:
    backend = StateBackend()
    backend.write("/log.txt", "host 10.0.0.1\nKEY = v\nJIRA-1234\n")
    backend.grep(pattern, regex=True)  # raises if refused


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(?:ab{1000}){300}", "too large"),
        ("x{1000000}", "too large"),
        ("(" * 150 + "a" + ")" * 150, "nests groups"),
    ],
)
def test_patterns_too_costly_to_compile_are_refused(pattern: str, why: str) -> None:
    backend = StateBackend()
    backend.write("/log.txt", "abc\n")
    with pytest.raises(BackendError, match=why):
        backend.grep(pattern, regex=True)
