"""The `Inspector` widget, `%agent inspect`, `_agent` as the inspector, and the tidied cell output:
captions and written order for `/outputs/` files, stopped tool lines, the final todo list, and
HTML frames that fit their content."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from typing import Any

import nbformat
import pytest
from IPython.core.error import UsageError
from nbconvert import HTMLExporter
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.jupyter.views import inspector_widget
from jupyter_deepagent.jupyter.views.inspector_widget import Inspector
from jupyter_deepagent.jupyter.views.output_files import fitted_height
from jupyter_deepagent.jupyter.views.render import CellView

WIDGET = "application/vnd.jupyter.widget-view+json"


def a_run() -> Any:
    model = ScriptedChatModel(script=[
        call("write_todos", todos=[{"content": "read", "status": "in_progress"}]),
        call("ls", path="/"), call("ls", path="/"), "done"])
    return trace_run(create_research_agent(model), {"messages": [{"role": "user",
                                                                  "content": "go"}]})


def test_live_updates_are_throttled_to_ten_a_second_and_the_end_shows_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events = a_run().events
    clock = [0.0]
    monkeypatch.setattr(inspector_widget.time, "perf_counter", lambda: clock[0])
    inspector = Inspector()
    summaries: list[str] = []
    inspector._summary.observe(lambda change: summaries.append(change["new"]), "value")
    for event in events:  # one event every 10 ms: 0.01 * len(events) seconds in all
        clock[0] += 0.01
        inspector.on_event(event)
    seconds = 0.01 * len(events)
    assert 1 <= len(summaries) <= seconds / inspector_widget.LIVE_INTERVAL + 1
    inspector.render()
    assert ">ok<" in inspector._summary.value  # the run_finished the throttle held back
    assert inspector.snapshot["run"]["model_calls"] == 4

    opened = Inspector(expanded=True)  # open: the gauge and step chart follow the run too
    charts = []
    opened._panes[3].observe(lambda change: charts.append(change["new"]), "value")
    for event in events[: len(events) // 2]:
        clock[0] += 0.2
        opened.on_event(event)
    assert charts and "jdi-step-bar" in charts[-1] and 'class="jdi-gauge"' in charts[-1]


def test_the_tabs_render_when_opened_and_the_display_carries_a_static_fallback() -> None:
    inspector = Inspector.from_trace(a_run())
    assert inspector._tabs.layout.display == "none"  # collapsed to the summary line
    inspector._toggle.value = True
    assert inspector._tabs.layout.display == ""
    titles = [inspector._tabs.get_title(i) for i in range(5)]
    assert titles == ["Prompt", "Skills", "Files", "Context", "Subagents"]
    assert 'data-section="base"' in inspector._panes[0].value
    assert 'class="jdi-gauge"' in inspector._panes[3].value
    data = inspector._repr_mimebundle_()
    assert WIDGET in data and 'data-section="base"' in data["text/html"]
    assert data["text/plain"].startswith("Run: scripted:")


def test_agent_inspect_shows_an_earlier_run_and_what_changed_since(notebook: Notebook) -> None:
    notebook.session.configure(model=scripted("first", "second"))
    assert notebook.run("%%agent\none").error is None
    assert notebook.run("%%agent --system 'Answer in French.'\ntwo").error is None
    second = notebook.run("%agent inspect")
    [bundle] = [o.data for o in second.displays if WIDGET in o.data]
    assert "Answer in French." in bundle["text/html"]
    changes = bundle["text/plain"].split("Prompt: ")[1]
    assert "(changed)" in changes.split("system_prompt")[1].split(",")[0]  # since the last run
    assert changes.count("(changed)") == 1
    first = notebook.run("%agent inspect --run 1")
    [bundle] = [o.data for o in first.displays if WIDGET in o.data]
    assert "Answer in French." not in bundle["text/html"]
    for line, message in [("--run 3", "runs 1 to 2"), ("--run x", "takes a number"),
                          ("--bogus", "usage: %agent inspect"),
                          ("-t elsewhere", "no run of thread 'elsewhere'")]:
        error = notebook.run(f"%agent inspect {line}").error
        assert isinstance(error, UsageError) and message in str(error), line


def test_agent_is_shown_as_the_inspector_and_repr_stays_short(notebook: Notebook) -> None:
    notebook.session.configure(model=scripted("ok"))
    notebook.run("%%agent\nhi")
    trace = notebook.shell.user_ns["_agent"]
    data, _ = notebook.shell.display_formatter.format(trace)
    assert WIDGET in data and 'class="jdi-gauge"' in data["text/html"]
    assert len(repr(trace)) < 200


def test_outputs_files_are_captioned_in_the_order_written_under_the_answer(
    notebook: Notebook,
) -> None:
    notebook.session.configure(model=scripted(
        call("write_file", file_path="/outputs/zeta.md", content="# Zeta"),
        call("write_file", file_path="/outputs/alpha.md", content="# Alpha"),
        "Both written."))
    cell = notebook.run("%%agent\nwrite two files")
    shown = [(o.metadata.get("jupyter_deepagent") or {}) for o in cell.displays]
    order = [m.get("caption") or m.get("path") or m.get("kind") for m in shown]
    assert order == [None, "answer", "/outputs/zeta.md", "/outputs/zeta.md", "/outputs/alpha.md",
                     "/outputs/alpha.md", None]
    assert WIDGET in cell.displays[-1].data  # the inspector comes last


def test_a_stopped_tool_line_says_so_and_the_todo_list_shows_its_last_state() -> None:
    view = CellView(rich=False)
    printed = io.StringIO()
    with redirect_stdout(printed):
        view.start("agent · thread t")
        view.on_event({"type": "todos", "todos": [{"content": "crawl", "status": "pending"}]})
        view.on_event({"type": "tool_call", "tool": "crawl", "tool_call_id": "1",
                       "args": {"site": "example.org"}})
        view.end("interrupted", todos=[{"content": "crawl", "status": "in_progress"}])
    assert "■ crawl site=example.org · stopped, no result" in printed.getvalue()
    assert "todos: ▶ crawl" in view._text()


def test_a_finished_tool_whose_arguments_were_cut_is_not_called_stopped() -> None:
    view = CellView(rich=False)
    with redirect_stdout(io.StringIO()):
        view.start("agent · thread t")
        view.on_event({"type": "tool_call", "tool": "task", "tool_call_id": "1",
                       "args": {"description": "Research the Svalbard stations " * 10}})
        view.on_event({"type": "tool_result", "tool": "task", "tool_call_id": "1",
                       "seconds": 0.2, "error": None})
        view.end("done")
    [line] = [line for line in view._text().splitlines() if "task" in line]
    assert line.lstrip().startswith("✓ task") and "…" in line  # cut, and finished
    assert "stopped" not in line and "■" not in line


def test_an_html_frame_fits_its_content_up_to_a_limit() -> None:
    assert fitted_height("<p>one line</p>") == "4.0em"
    rows = "".join(f"<tr><td>{i}</td></tr>" for i in range(10))
    assert fitted_height(f"<table>{rows}</table>") == "19.9em"
    assert fitted_height("<p>x</p>" * 500) == "36.0em"


def test_nbconvert_html_of_a_saved_run_holds_the_prompt_sections_and_the_gauge(
    notebook: Notebook,
) -> None:
    notebook.session.configure(model=scripted("ok"))
    cell = notebook.run("%%agent\nhi")
    outputs = [nbformat.v4.new_output("display_data", data=o.data, metadata=o.metadata)
               for o in cell.displays]
    saved = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%%agent\nhi",
                                                                      outputs=outputs)])
    page, _ = HTMLExporter().from_notebook_node(saved)  # no widget state: the fallback shows
    for name in ("base", "todos", "filesystem", "subagents"):
        assert f'data-section="{name}"' in page
    assert 'class="jdi-gauge"' in page and "summarization at 85.0k" in page
