"""Every display of model- or agent-written text, driven through `%%agent` with an attacker model:
nothing it writes can run in the page.

For each payload of `html_payloads`, a scripted model writes it to the shared memory file, to
`/outputs/notes.md` and `/outputs/page.html`, has a subagent return it, and answers with it
(streamed token by token); `%agent show` then shows the memory file, and a second run waits for
approval of a call whose arguments hold it. Every output of those cells (each streamed update
too), the inspector's panes and the sidebar's snapshots are read as a browser reads them
(`problems`): the page renders `text/html` as it is and `text/markdown` through its own Markdown
parser, which passes raw HTML through.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import html5lib
import pytest
from html_payloads import PAYLOADS, page_html, problems
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401
from test_sidebar_comm import KernelNotebook

from jupyter_deepagent.trace.inspector.theme import STYLE
from jupyter_deepagent.trace.results import FRAME_STYLE

MEMORY = '[tool.jupyter-deepagent]\nmemory = ["/memories/AGENTS.md"]\n'


def _pandas_style() -> str:
    import pandas as pd

    page = pd.DataFrame({"a": [1]})._repr_html_()
    root = html5lib.parseFragment(page, treebuilder="etree", namespaceHTMLElements=False)
    return next(root.iter("style")).text


def shown_problems(outputs: list[Any]) -> list[str]:
    """The problems of every output the cell sent (updates of a display included)."""
    styles = {STYLE, _pandas_style(), FRAME_STYLE}
    found = []
    for index, output in enumerate(outputs):
        for html in page_html(output.data):
            view = html.startswith(f"<style>{STYLE}</style>")  # the inspector's static HTML
            found += [f"output {index}: {p}" for p in problems(html, styles=styles, view=view)]
    return found


def _all_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Render the streamed answer at every token: no pause between two renders."""
    from jupyter_deepagent.jupyter.views import render

    monkeypatch.setattr(render, "_STREAM_SECONDS", 0.0)
    monkeypatch.setattr(render, "_STREAM_COST_SHARE", 0)
    monkeypatch.setattr(render, "_STREAM_CHARS_PER_SECOND", float("inf"))


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KernelNotebook]:
    """A notebook in a project whose agent keeps a shared memory file, with a kernel that has a
    comm manager (for the sidebar)."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(MEMORY)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    made = KernelNotebook(folder)
    yield made
    made.stop()


def _attacker(payload: str) -> Any:
    return scripted(
        call("write_file", file_path="/memories/AGENTS.md", content=payload),
        call("write_file", file_path="/outputs/notes.md", content=payload),
        call("write_file", file_path="/outputs/page.html", content=payload),
        {"tool_calls": [{"name": "task", "args": {"description": "Survey the payload.",
                                                   "subagent_type": "general-purpose"}}]},
        payload,
        rules=[{"when": "Survey the payload.", "reply": payload, "repeat": True}],
    )


def _pre_texts(page: str) -> list[str]:
    root = html5lib.parseFragment(page, treebuilder="etree", namespaceHTMLElements=False)
    return ["".join(pre.itertext()) for pre in root.iter("pre")]


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_nothing_the_model_writes_runs_in_any_display(
    lab: KernelNotebook, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    payload = PAYLOADS[name]
    _all_renders(monkeypatch)
    sidebar = lab.open_sidebar()
    lab.session.configure(model=_attacker(payload))
    cell = lab.run("%%agent\nsurvey")
    assert cell.error is None, cell.stderr
    paths = [o.metadata.get("jupyter_deepagent", {}).get("path") for o in cell.displays]
    assert {"/outputs/notes.md", "/outputs/page.html"} <= set(paths)
    [answer] = [o for o in cell.displays
                if o.metadata.get("jupyter_deepagent", {}).get("kind") == "answer"]
    streamed = [o.data["text/plain"] for o in cell.outputs
                if o.transient == answer.transient and o.data["text/plain"]]
    assert len(streamed) >= len(payload.split())  # the answer streamed, a render per word
    assert shown_problems(cell.outputs) == []

    from jupyter_deepagent.jupyter.views.inspector_widget import Inspector

    inspector = Inspector.from_trace(lab.shell.user_ns["_agent"], expanded=True)
    for pane in [inspector._summary, *inspector._panes]:
        assert problems(pane.value, view=True) == []
    snapshots = [m["html"] for m in sidebar.sent if m.get("type") == "snapshot"]
    assert snapshots  # live ones and the final one
    for page in snapshots:
        assert page.startswith(f"<style>{STYLE}</style>")
        assert problems(page, styles={STYLE}, view=True) == []

    # a run keeps the prompt it started with: the memory the agent wrote is in the next run's
    lab.session.configure(model=scripted("Noted."))
    again = lab.run("%%agent\nagain")
    assert again.error is None, again.stderr
    show = lab.run("%agent show")
    assert shown_problems(show.outputs) == []
    [memory] = [o for o in show.displays if "AGENTS.md" in o.data.get("text/plain", "")]
    if "\0" not in payload:  # the memory file is shown as written, as text
        assert any(payload.strip("\n") in text for text in _pre_texts(memory.data["text/html"]))

    lab.run("%agent config interrupt_on=write_file")
    lab.session.configure(model=scripted(call("write_file", file_path="/outputs/x.md",
                                              content=payload)))
    paused = lab.run("%%agent -t approval\nwrite it")
    kinds = [o.metadata.get("jupyter_deepagent", {}).get("kind") for o in paused.displays]
    assert "approval" in kinds
    assert shown_problems(paused.outputs) == []


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_a_tool_name_and_arguments_awaiting_approval_show_as_text(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    from jupyter_deepagent.jupyter.views import render
    from jupyter_deepagent.jupyter.views.approval_buttons import approval_markdown

    payload = PAYLOADS[name]
    pending = [{"name": payload, "args": {payload: payload}, "allowed": ["approve", "reject"]},
               {"name": "python", "args": {"code": payload}, "allowed": ["approve"]}]
    shown: list[Any] = []
    monkeypatch.setattr(render, "show", lambda obj, **_: shown.append(obj))
    render.show_pending(pending, thread="t")
    shown.append(render.markdown(approval_markdown(pending, "t", buttons=True)))
    for obj in shown:
        data, _ = obj._repr_mimebundle_()
        assert [p for html in page_html(data) for p in problems(html)] == []
        assert data["text/plain"].startswith("**Waiting for your approval**")


def test_html_in_a_file_name_shows_as_the_name(notebook: Notebook) -> None:
    names = ["/outputs/<img src=x onerror=alert(1)>.md", '/outputs/a"onmouseover="alert(2).md']
    steps = [call("write_file", file_path=path, content="# Notes") for path in names]
    notebook.session.configure(model=scripted(*steps, "Done."))
    cell = notebook.run("%%agent\nwrite them")
    assert cell.error is None
    assert shown_problems(cell.outputs) == []
    captions = [o.data["text/html"] for o in cell.displays
                if "caption" in o.metadata.get("jupyter_deepagent", {})]
    texts = ["".join(html5lib.parseFragment(c, treebuilder="etree",
                                            namespaceHTMLElements=False).itertext())
             for c in captions]
    assert sorted(texts) == sorted(names)


SHOWN_BY_A_COLLEAGUE = ["closes_the_show_fence", "fence_closed_by_tilde_line", "raw_script",
                        "img_onerror", "math_mxss", "details_ontoggle"]


@pytest.mark.parametrize("name", SHOWN_BY_A_COLLEAGUE)
def test_a_memory_file_one_user_s_agent_wrote_is_only_text_in_a_colleague_s_show(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    payload = PAYLOADS[name]
    (notebook.folder / "pyproject.toml").write_text(MEMORY)
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    notebook.restart()
    notebook.session.configure(model=scripted(
        call("write_file", file_path="/memories/AGENTS.md", content=payload), "Noted."))
    assert notebook.run("%%agent\nremember this").error is None

    monkeypatch.setenv("JUPYTERHUB_USER", "bob")  # a colleague opens the project
    notebook.restart()
    assert notebook.session.owner.user == "bob"
    show = notebook.run("%agent show")
    assert show.error is None
    assert shown_problems(show.outputs) == []
    [memory] = [o for o in show.displays if "AGENTS.md" in o.data.get("text/plain", "")]
    assert payload in memory.data["text/plain"]  # bob sees what ana's agent wrote, as text
    assert any(payload.strip("\n") in text for text in _pre_texts(memory.data["text/html"]))


def test_the_sidebar_gets_the_same_cleaned_html_for_an_earlier_run(
    lab: KernelNotebook,
) -> None:
    payload = PAYLOADS["img_onerror"] + "\n\n" + PAYLOADS["svg_script"]
    lab.session.configure(model=_attacker(payload))
    assert lab.run("%%agent\nsurvey").error is None
    comm = lab.open_sidebar()
    reply = comm.deliver({"protocol": comm.sent[0]["protocol"], "type": "request", "id": "r",
                          "want": "snapshot", "run": 1})
    assert reply["type"] == "snapshot", reply
    assert problems(reply["html"], styles={STYLE}, view=True) == []
    assert "&lt;img src=x onerror=" in reply["html"]  # shown as the text it is
