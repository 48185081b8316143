"""The file tools as the model sees them and as a run uses them, over state, disk and mounts."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, NotRequired

import pytest
from langchain.agents import AgentState, create_agent
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.types import Command

from jupyter_deepagent.backends.composite import CompositeBackend
from jupyter_deepagent.backends.disk import DiskBackend
from jupyter_deepagent.backends.state import StateBackend, merge_files
from jupyter_deepagent.harness.models.scripted_model import ScriptedChatModel
from jupyter_deepagent.harness.tools import filesystem
from jupyter_deepagent.harness.tools.filesystem import (
    FILESYSTEM_TOOL_NAMES,
    TOOL_DESCRIPTIONS,
    filesystem_prompt,
    filesystem_tools,
)

EXPECTED_ARGS = {
    "ls": {"path"},
    "read_file": {"file_path", "offset", "limit"},
    "write_file": {"file_path", "content"},
    "edit_file": {"file_path", "old_string", "new_string", "replace_all"},
    "delete": {"file_path"},
    "glob": {"pattern", "path"},
    "grep": {"pattern", "path", "glob", "regex", "output_mode"},
}


class FilesState(AgentState):
    files: Annotated[NotRequired[dict], merge_files]


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def _schemas(tools: list[Any]) -> dict[str, dict[str, Any]]:
    return {
        schema["function"]["name"]: schema["function"]
        for schema in map(convert_to_openai_tool, tools)
    }


class Files:
    """Calls the tools outside an agent, carrying the state's files from call to call."""

    def __init__(self, backend: Any = None) -> None:
        self.tools = {t.name: t for t in filesystem_tools(backend or StateBackend())}
        self.files: dict[str, Any] = {}
        self.calls = 0

    def _runtime(self) -> ToolRuntime:
        self.calls += 1
        return ToolRuntime(
            state={"files": self.files},
            context=None,
            config={},
            stream_writer=lambda _chunk: None,
            tool_call_id=f"call-{self.calls}",
            store=None,
        )

    def _text(self, result: Any) -> str:
        if isinstance(result, Command):
            self.files = merge_files(self.files, result.update["files"])
            result = result.update["messages"][0]
        return result.content if isinstance(result, ToolMessage) else result

    def __call__(self, name: str, **args: Any) -> str:
        return self._text(self.tools[name].invoke({**args, "runtime": self._runtime()}))

    def acall(self, name: str, **args: Any) -> str:
        coroutine = self.tools[name].ainvoke({**args, "runtime": self._runtime()})
        return self._text(asyncio.run(coroutine))


# --- the tools as the model sees them ---------------------------------------------------------


def test_model_sees_seven_tools_with_described_arguments_and_no_runtime() -> None:
    schemas = _schemas(filesystem_tools(StateBackend()))

    assert tuple(schemas) == FILESYSTEM_TOOL_NAMES
    for name, schema in schemas.items():
        properties = schema["parameters"]["properties"]
        assert set(properties) == EXPECTED_ARGS[name]
        assert "runtime" not in properties
        assert schema["description"] == TOOL_DESCRIPTIONS[name]
        for arg in properties.values():
            assert arg["description"].strip()
    assert schemas["grep"]["parameters"]["properties"]["output_mode"]["enum"] == [
        "files_with_matches",
        "content",
        "count",
    ]
    assert schemas["read_file"]["parameters"]["required"] == ["file_path"]


def test_descriptions_tell_the_model_how_to_use_the_tools() -> None:
    assert "Read the file first" in TOOL_DESCRIPTIONS["edit_file"]
    assert "offset" in TOOL_DESCRIPTIONS["read_file"]
    assert "literal" in TOOL_DESCRIPTIONS["grep"]
    file_path = _schemas(filesystem_tools(StateBackend()))["read_file"]["parameters"]
    assert "Absolute virtual path" in file_path["properties"]["file_path"]["description"]


def test_description_overrides_and_exclusions() -> None:
    tools = filesystem_tools(
        StateBackend(), descriptions={"grep": "Search the notes."}, exclude={"delete", "ls"}
    )
    schemas = _schemas(tools)

    assert list(schemas) == ["read_file", "write_file", "edit_file", "glob", "grep"]
    assert schemas["grep"]["description"] == "Search the notes."
    assert schemas["glob"]["description"] == TOOL_DESCRIPTIONS["glob"]


def test_unknown_tool_names_and_backend_classes_are_refused() -> None:
    with pytest.raises(ValueError, match="greps"):
        filesystem_tools(StateBackend(), exclude=["greps"])
    with pytest.raises(ValueError, match="cat"):
        filesystem_tools(StateBackend(), descriptions={"cat": "x"})
    with pytest.raises(TypeError, match=r"StateBackend\(\.\.\.\)"):
        filesystem_tools(StateBackend)  # type: ignore[arg-type]


def test_prompt_section_names_only_the_tools_given() -> None:
    full = filesystem_prompt(FILESYSTEM_TOOL_NAMES)
    read_only = filesystem_prompt(["ls", "read_file", "glob", "task"])

    assert all(f"`{name}`" in full for name in FILESYSTEM_TOOL_NAMES)
    assert "absolute" in full
    assert len(full) / 4 < 250
    assert "`read_file`" in read_only
    assert "write_file" not in read_only
    assert "edit_file" not in read_only
    assert filesystem_prompt(["task"]) == ""


# --- end to end through create_agent ------------------------------------------------------------

LONG = "".join(f"line {n}\n" for n in range(1, 501))
WIDE = "short\n" + "w" * 5000 + "\n"


def _script() -> list[AIMessage]:
    return [
        AIMessage(
            content="",
            tool_calls=[
                _call("write_file", {"file_path": "/notes/long.txt", "content": LONG}, "w1"),
                _call("write_file", {"file_path": "/notes/wide.txt", "content": WIDE}, "w2"),
                _call("write_file", {"file_path": "/notes/dup.md", "content": "x\nx\n"}, "w3"),
            ],
        ),
        AIMessage(
            content="",
            tool_calls=[
                _call("read_file", {"file_path": "/notes/long.txt", "limit": 100}, "r1"),
                _call("read_file", {"file_path": "/notes/wide.txt"}, "r2"),
                _call(
                    "edit_file",
                    {"file_path": "/notes/dup.md", "old_string": "x", "new_string": "y"},
                    "e1",
                ),
                _call("read_file", {"file_path": "/notes/missing.md"}, "r3"),
                _call("read_file", {"file_path": "/notes/long.txt", "offset": -1}, "r4"),
            ],
        ),
        AIMessage(
            content="",
            tool_calls=[
                _call(
                    "edit_file",
                    {
                        "file_path": "/notes/dup.md",
                        "old_string": "x",
                        "new_string": "y",
                        "replace_all": True,
                    },
                    "e2",
                ),
                _call("ls", {"path": "/notes"}, "l1"),
                _call("glob", {"pattern": "**/*.{md,txt}"}, "g1"),
                _call(
                    "grep",
                    {"pattern": "^line 42$", "regex": True, "output_mode": "content"},
                    "s1",
                ),
                _call("delete", {"file_path": "/notes/wide.txt"}, "d1"),
            ],
        ),
        AIMessage(content="Done: the notes are written."),
    ]


def _agent(model: ScriptedChatModel) -> Any:
    return create_agent(model, tools=filesystem_tools(StateBackend()), state_schema=FilesState)


def _assert_run(model: ScriptedChatModel, result: dict[str, Any]) -> None:
    request = model.requests[-1]
    assert set(request.tool_names) == set(FILESYSTEM_TOOL_NAMES)
    replies = {m.tool_call_id: m for m in request.messages if isinstance(m, ToolMessage)}
    assert len(replies) == 13

    files = result["files"]
    assert set(files) == {"/notes/long.txt", "/notes/dup.md"}
    assert files["/notes/long.txt"]["content"] == LONG
    assert files["/notes/dup.md"]["content"] == "y\ny\n"

    size = f"{len(LONG.encode()):,} bytes"
    assert replies["w1"].content == f"Wrote 500 lines ({size}) to /notes/long.txt (new file)."
    page = replies["r1"].content
    assert page.startswith("     1\tline 1\n     2\tline 2\n")
    assert "   100\tline 100\n" in page
    assert "line 101" not in page
    assert page.endswith(
        "[Showing lines 1-100 of 500. "
        'Continue with read_file(file_path="/notes/long.txt", offset=100, limit=100).]'
    )
    assert replies["r2"].content == (
        "     1\tshort\n     2\t" + "w" * 2000 + "… [line cut: 3,000 more characters]"
    )
    conflict = replies["e1"]
    assert conflict.status == "error"
    assert conflict.content.startswith("Error: ")
    assert "2 times" in conflict.content
    missing = replies["r3"]
    assert missing.status == "error"
    assert "/notes/missing.md does not exist" in missing.content
    assert replies["r4"].status == "error"
    assert "offset must be 0 or more" in replies["r4"].content
    assert replies["e2"].content == "Replaced 2 occurrences in /notes/dup.md."
    listing = replies["l1"].content.splitlines()
    assert [row.split()[0] for row in listing] == [
        "/notes/dup.md",
        "/notes/long.txt",
        "/notes/wide.txt",
    ]
    assert size in listing[1]
    assert replies["g1"].content == "/notes/dup.md\n/notes/long.txt\n/notes/wide.txt"
    assert replies["s1"].content == "/notes/long.txt:42: line 42"
    assert replies["d1"].content == "Deleted /notes/wide.txt."
    assert all(replies[i].name == n for i, n in [("w1", "write_file"), ("e1", "edit_file")])

    final = result["messages"][-1]
    assert isinstance(final, AIMessage)
    assert final.content == "Done: the notes are written."


def test_agent_run_writes_state_files_and_the_model_reads_tool_results() -> None:
    model = ScriptedChatModel(script=_script())
    result = _agent(model).invoke({"messages": [HumanMessage("Take notes.")]})
    _assert_run(model, result)


def test_agent_run_async_gives_the_same_results() -> None:
    model = ScriptedChatModel(script=_script())
    result = asyncio.run(_agent(model).ainvoke({"messages": [HumanMessage("Take notes.")]}))
    _assert_run(model, result)


def test_backend_factory_receives_the_runtime() -> None:
    seen: list[str | None] = []

    def factory(runtime: ToolRuntime) -> StateBackend:
        seen.append(runtime.tool_call_id)
        return StateBackend()

    files = Files(factory)
    files("write_file", file_path="/a.md", content="hi")
    assert files("read_file", file_path="/a.md") == "     1\thi"
    assert seen == ["call-1", "call-2"]


# --- outputs the model reads ----------------------------------------------------------------


def test_read_file_pages_and_reports_empty_files_and_bad_limits() -> None:
    files = Files()
    files("write_file", file_path="/long.txt", content=LONG)
    files("write_file", file_path="/empty.txt", content="")

    page = files("read_file", file_path="/long.txt", offset=200)
    assert page.splitlines()[0] == "   201\tline 201"
    assert page.endswith('Continue with read_file(file_path="/long.txt", offset=400).]')
    assert "[Showing lines 201-400 of 500." in page
    last = files("read_file", file_path="/long.txt", offset=400)
    assert last.splitlines()[-1] == "   500\tline 500"
    assert "Continue" not in last
    assert files("read_file", file_path="/empty.txt") == "/empty.txt is empty (0 lines)."
    assert files("read_file", file_path="/long.txt", limit=0).startswith("Error: limit must")
    assert "past the end" in files("read_file", file_path="/long.txt", offset=900)


def test_write_file_says_whether_it_created_or_overwrote() -> None:
    files = Files()
    assert files("write_file", file_path="/a.md", content="one\ntwo") == (
        "Wrote 2 lines (7 bytes) to /a.md (new file)."
    )
    assert files("write_file", file_path="/a.md", content="é") == (
        "Wrote 1 line (2 bytes) to /a.md, replacing its previous content."
    )
    assert files.files["/a.md"]["content"] == "é"


def test_edit_file_refuses_missing_text_and_no_op_edits() -> None:
    files = Files()
    files("write_file", file_path="/a.md", content="alpha\n")
    missing = files("edit_file", file_path="/a.md", old_string="beta", new_string="b")
    assert missing.startswith("Error: ") and "not found" in missing
    same = files("edit_file", file_path="/a.md", old_string="alpha", new_string="alpha")
    assert same.startswith("Error: ") and "identical" in same
    assert files.files["/a.md"]["content"] == "alpha\n"


def test_ls_glob_and_grep_say_when_nothing_is_there() -> None:
    files = Files()
    assert files("ls") == "The folder / is empty."
    files("write_file", file_path="/a.md", content="alpha\n")
    assert files("glob", pattern="*.py") == "No files match '*.py' under /."
    assert files("grep", pattern="zeta") == "No matches for 'zeta' in /."
    assert files("grep", pattern="alpha", glob="*.py") == (
        "No matches for 'alpha' in / (files matching '*.py')."
    )


def test_grep_output_modes_and_regex() -> None:
    files = Files()
    files("write_file", file_path="/src/a.py", content="import os.path\nos.path\n")
    files("write_file", file_path="/src/b.md", content="see os.path\n")
    files("write_file", file_path="/c.txt", content="nothing\n")

    assert files("grep", pattern="os.") == "/src/a.py\n/src/b.md"
    assert files("grep", pattern="os.", output_mode="count") == "/src/a.py: 2\n/src/b.md: 1"
    assert files("grep", pattern="os.path", output_mode="content", glob="*.md") == (
        "/src/b.md:1: see os.path"
    )
    assert files("grep", pattern="o.\\.", regex=True, path="/src") == "/src/a.py\n/src/b.md"
    assert files("grep", pattern="o.\\.") == "No matches for 'o.\\\\.' in /."
    assert files("grep", pattern="(", regex=True).startswith("Error: invalid regular expression")


def test_glob_expands_braces_and_double_star() -> None:
    files = Files()
    for path in ("/data/a.csv", "/data/deep/b.json", "/data/c.txt", "/top.csv"):
        files("write_file", file_path=path, content="x")

    assert files("glob", pattern="**/*.{csv,json}") == ("/data/a.csv\n/data/deep/b.json\n/top.csv")
    assert files("glob", pattern="*.{csv,txt}", path="/data") == "/data/a.csv\n/data/c.txt"


def test_big_outputs_are_capped_with_a_note() -> None:
    files = Files()
    stamp = "2025-01-01T00:00:00+00:00"
    files.files = {
        f"/many/f{n:04}.txt": {"content": "needle\n" * 2, "modified_at": stamp} for n in range(600)
    }

    listing = files("ls", path="/many").splitlines()
    assert len(listing) == 501
    assert listing[-1].startswith("[Showing 500 of 600 entries; 100 left out.")
    found = files("glob", pattern="**/*.txt").splitlines()
    assert found[-1].startswith("[Showing 500 of 600 matching files; 100 left out.")
    lines = files("grep", pattern="needle", output_mode="content").splitlines()
    assert len(lines) == 501
    assert lines[-1] == (
        "[Showing 500 of 1,200 matching lines; 700 left out. "
        "Narrow the search with path=, glob= or a more specific pattern.]"
    )


def test_async_tools_share_the_state_files() -> None:
    files = Files()
    assert files.acall("write_file", file_path="/a.md", content="x\n").startswith("Wrote 1 line")
    assert files.acall("read_file", file_path="/a.md") == "     1\tx"
    assert files.acall("delete", file_path="/a.md") == "Deleted /a.md."
    assert files.files == {}


# --- other backends -----------------------------------------------------------------------------


def test_tools_over_disk_write_real_files(tmp_path: Any) -> None:
    files = Files(DiskBackend(tmp_path))
    assert files("write_file", file_path="/notes/a.md", content="hello\n").endswith("(new file).")
    assert (tmp_path / "notes" / "a.md").read_text() == "hello\n"
    assert files.files == {}  # nothing goes into the graph state
    files("edit_file", file_path="/notes/a.md", old_string="hello", new_string="bye")
    assert (tmp_path / "notes" / "a.md").read_text() == "bye\n"
    assert files("grep", pattern="bye", output_mode="content") == "/notes/a.md:1: bye"
    assert files.acall("delete", file_path="/notes/a.md") == "Deleted /notes/a.md."
    assert not (tmp_path / "notes" / "a.md").exists()


def test_tools_over_mounts_route_by_path(tmp_path: Any) -> None:
    backend = CompositeBackend(StateBackend(), {"/workspace/": DiskBackend(tmp_path)})
    files = Files(backend)
    files("write_file", file_path="/workspace/data.csv", content="a,b\n")
    files("write_file", file_path="/scratch.md", content="a,b\n")

    assert (tmp_path / "data.csv").read_text() == "a,b\n"
    assert set(files.files) == {"/scratch.md"}
    assert files("grep", pattern="a,b") == "/scratch.md\n/workspace/data.csv"
    assert "/workspace/" in files("ls").split()
    escape = files("read_file", file_path="/workspace/../etc/passwd")
    assert escape.startswith("Error: ") and "not a valid path" in escape


def test_module_exports() -> None:
    assert all(hasattr(filesystem, name) for name in filesystem.__all__)


# --- where the tools differ from deepagents' on purpose (each kept for a reason) ---------------


def test_a_missing_folder_is_an_error_not_an_empty_answer() -> None:
    """deepagents answers "No files found" / "No matches found"; a typo in `path` here says so."""
    files = Files()
    files("write_file", file_path="/notes/a.md", content="alpha\n")
    for name, args in (("glob", {"pattern": "*.md"}), ("grep", {"pattern": "alpha"})):
        answer = files(name, path="/note", **args)
        assert answer == "Error: /note does not exist. Use ls('/') to see what is there."


def test_an_edit_that_changes_nothing_is_refused_and_the_file_kept() -> None:
    """deepagents reports "Successfully replaced 1 instance(s)" for old_string == new_string."""
    files = Files()
    files("write_file", file_path="/a.md", content="alpha\n")
    same = files("edit_file", file_path="/a.md", old_string="alpha", new_string="alpha")
    assert same == (
        "Error: old_string and new_string are identical, so the edit would change nothing."
    )


def test_read_file_pages_200_lines_by_default() -> None:
    """deepagents' read_file shows 100 lines unless told; the schema says which default holds."""
    files = Files()
    files("write_file", file_path="/long.txt", content=LONG)
    schema = _schemas(list(files.tools.values()))["read_file"]["parameters"]
    assert schema["properties"]["limit"]["default"] == 200
    page = files("read_file", file_path="/long.txt").splitlines()
    assert page[199] == "   200\tline 200"
    assert page[200] == (
        '[Showing lines 1-200 of 500. Continue with read_file(file_path="/long.txt", offset=200).]'
    )


def test_glob_results_are_sorted_by_path_not_by_modification_time() -> None:
    """deepagents lists the newest first; here the answer is the same bytes whenever the files
    are the same, so a research log replays."""
    files = Files()
    stamp = "2025-01-0{}T00:00:00+00:00"
    files.files = {
        "/b.md": {"content": "x", "modified_at": stamp.format(3)},
        "/a.md": {"content": "x", "modified_at": stamp.format(1)},
        "/c.md": {"content": "x", "modified_at": stamp.format(2)},
    }
    assert files("glob", pattern="*.md") == "/a.md\n/b.md\n/c.md"


def test_glob_patterns_match_as_deepagents_through_the_tools() -> None:
    files = Files()
    for path in ("/a.md", "/notes/b.md", "/.drafts/c.md", "/.d.md"):
        files("write_file", file_path=path, content="needle\n")
    assert files("glob", pattern="*.md") == "/.drafts/c.md\n/a.md\n/notes/b.md"
    assert files("glob", pattern="**/*.md") == "/a.md\n/notes/b.md"
    assert files("glob", pattern="/*.md", path="/notes") == "/notes/b.md"
    assert files("grep", pattern="needle", glob="*.md") == "/.drafts/c.md\n/a.md\n/notes/b.md"
    assert files("grep", pattern="needle") == "/.d.md\n/.drafts/c.md\n/a.md\n/notes/b.md"
    traversal = files("glob", pattern="../*.md")
    assert traversal.startswith("Error: the glob pattern '../*.md' has a '..' level")
    assert files("grep", pattern="x", glob="../*").startswith("Error: the glob pattern '../*'")


def test_a_leading_slash_that_finds_nothing_says_where_it_was_anchored() -> None:
    files = Files()
    files("write_file", file_path="/notes/b.md", content="x")
    assert files("glob", pattern="/notes/*.md", path="/notes") == (
        "No files match '/notes/*.md' under /notes. A pattern starting with '/' is anchored at "
        "the folder searched: this one looked for 'notes/*.md' inside /notes. For "
        "absolute paths, search from '/' (path='/')."
    )
    assert files("glob", pattern="/*.py") == "No files match '/*.py' under /."
