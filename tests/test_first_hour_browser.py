"""The first hour as a newcomer sees it: the quickstart run in a real JupyterLab with the built
sidebar (Debian's Chromium driven by Playwright, loopback only, as the other browser tests), plus
one cell that waits for an approval. It checks what the README promises at a glance:

- an `%%agent` cell reads as prose: its request is not highlighted as Python (a word after an
  apostrophe is not coloured as a string, where the same text in a plain cell is), and a cell
  the user turns into an agent cell by typing `%%agent` changes at once;
- the sidebar reads at 220 px and at 400 px: every text in it renders at 11 px or more and no
  label is cut, on every tab;
- after Approve the cell shows one inspector for the whole turn;
- the subagents' DataFrame fits the cell and says it is `agent_results`.

Screenshots go to tests/artifacts/ (ignored by git). With JUPYTER_DEEPAGENT_SCREENSHOTS set to a
folder (`JUPYTER_DEEPAGENT_SCREENSHOTS=docs/images`), the test also writes the README's picture
there: `inspector-and-sidebar.png`, the inspector of the first agent cell beside the sidebar.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_under_test import (
    launch_chromium,
    open_notebook,
    playwright_ready,  # noqa: F401 - a fixture
    run_all_cells,
    running_jupyterlab,
    wait_for,
)
from sidebar_build import ROOT, need_built_sidebar
from test_inspector_browser import ARTIFACTS

PANEL = "#jupyter-deepagent-sidebar"
SMALLEST_TEXT_PX = 11
REQUEST_WORD = "permafrost"  # in the first agent cell, after "region's"
APPROVAL_SCRIPT = """\
name: scripted-approval
profile: {max_input_tokens: 32000}
script:
  - tool_calls: [{name: python, args: {code: "print(len(stations), 'stations')"}}]
  - There are 12 stations in the table.
"""
APPROVAL_CELL = "%%agent -m scripted:scripts/approval.yaml --python\nHow many stations are there?"

# What a user sees of every element with text of its own in a box: its rendered font size (an
# SVG's text scaled with its drawing) and whether a one-line label is cut.
_TEXT_METRICS = """
root => {
  const found = [];
  for (const el of root.querySelectorAll('*')) {
    const own = el.localName === 'select'
      ? (el.selectedOptions[0] || {}).textContent || ''
      : Array.from(el.childNodes)
          .filter(n => n.nodeType === Node.TEXT_NODE)
          .map(n => n.textContent.trim())
          .join(' ')
          .trim();
    if (!own || !el.checkVisibility({ visibilityProperty: true, opacityProperty: false })) {
      continue;
    }
    if (el.closest('title, style, option')) {
      continue;
    }
    const rect = el.getBoundingClientRect();
    if (!rect.width || !rect.height) {
      continue;
    }
    const style = getComputedStyle(el);
    let size = parseFloat(style.fontSize);
    const svg = el.closest('svg');
    if (svg && el.getScreenCTM) {
      const ctm = el.getScreenCTM();
      size *= Math.hypot(ctm.a, ctm.b);
    }
    const clips = ['hidden', 'clip'].includes(style.overflowX);
    const cut =
      !svg && clips && style.whiteSpace.startsWith('nowrap') && el.scrollWidth > el.clientWidth + 1;
    const ellipsis = !svg && style.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1;
    found.push({ text: own.slice(0, 40), tag: el.localName, cls: String(el.className.baseVal ?? el.className),
                 size: Math.round(size * 10) / 10, cut: cut || ellipsis });
  }
  return found;
}
"""

# The colour and the highlighting class of the word `word` in a cell's editor.
_WORD_STYLE = """
([cell, word]) => {
  const content = cell.querySelector('.cm-content');
  const walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.textContent.includes(word)) {
      const el = node.parentElement;
      const line = el.closest('.cm-line');
      return { color: getComputedStyle(el).color, lineColor: getComputedStyle(line).color,
               token: el === line ? '' : el.className };
    }
  }
  return null;
}
"""


def _quickstart_with_an_approval(root: Path) -> None:
    """The quickstart, plus a last cell whose agent asks before it runs Python."""
    path = root / "quickstart.ipynb"
    notebook = json.loads(path.read_text())
    notebook["cells"].append(
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "approval",
            "metadata": {},
            "outputs": [],
            "source": APPROVAL_CELL.splitlines(keepends=True),
        }
    )
    path.write_text(json.dumps(notebook, indent=1))
    (root / "scripts" / "approval.yaml").write_text(APPROVAL_SCRIPT)


@pytest.fixture
def lab(tmp_path: Path, playwright_ready: None) -> Iterator[tuple[str, Path]]:  # noqa: F811
    """JupyterLab with the built sidebar on a copy of the shipped notebooks; yields its URL and
    the folder."""
    built = need_built_sidebar()
    root = tmp_path / "lab"
    shutil.copytree(ROOT / "notebooks", root, ignore=shutil.ignore_patterns(".deepagent", ".env"))
    _quickstart_with_an_approval(root)
    jupyter_path = tmp_path / "jupyter"
    (jupyter_path / "labextensions").mkdir(parents=True)
    (jupyter_path / "labextensions" / "jupyter-deepagent").symlink_to(built)
    # every cell in the page (no windowing), so the test can read any cell's editor
    tracker = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    with running_jupyterlab(
        root,
        tmp_path,
        env={"JUPYTER_PATH": str(jupyter_path)},
        args=("--LabApp.expose_app_in_browser=True",),
    ) as url:
        yield url, root


def _cell(page: Any, text: str) -> Any:
    """The notebook's first code cell whose source holds `text`."""
    return (
        page.locator(".jp-Notebook .jp-CodeCell")
        .filter(has=page.locator(".cm-content", has_text=text))
        .first
    )


def _word_style(cell: Any, word: str) -> dict[str, str]:
    cell.scroll_into_view_if_needed()
    style = cell.evaluate(f"(cell, word) => ({_WORD_STYLE})([cell, word])", word)
    assert style is not None, f"{word!r} is not in the cell's editor"
    return style


def _size_sidebar(page: Any, width: int) -> None:
    """Drag the right sidebar to `width` px (through the shell's split panel)."""
    for _ in range(4):
        shown = page.evaluate(f"() => document.querySelector('{PANEL}').offsetWidth")
        if abs(shown - width) <= 1:
            return
        page.evaluate(
            """([panel, width]) => {
              const split = window.jupyterapp.shell._hsplitPanel;
              const sizes = split.widgets.map(w => w.node.offsetWidth);
              const delta = width - document.querySelector(panel).offsetWidth;
              sizes[sizes.length - 1] += delta;
              sizes[sizes.length - 2] -= delta;
              split.setRelativeSizes(sizes);
              split.fit();
            }""",
            [PANEL, width],
        )
        time.sleep(0.5)
    shown = page.evaluate(f"() => document.querySelector('{PANEL}').offsetWidth")
    assert abs(shown - width) <= 1, f"the sidebar is {shown} px wide, not {width}"


def _sidebar_problems(panel: Any, width: int, run: str) -> list[str]:
    """What is too small or cut on each tab of the run the sidebar shows; screenshots of each."""
    titles = panel.locator(".jdi-tabs > label").all_inner_texts()
    assert {"Prompt", "Context", "Files"} <= set(titles), titles
    problems = []
    for title in titles:
        panel.locator(".jdi-tabs > label", has_text=title).click()
        # what a row shows when opened is text too (opened without a click: a click on a file's
        # row could hit its "open" button)
        panel.locator(".jdi-panel:visible details").evaluate_all(
            "rows => rows.forEach(row => { row.open = true; })"
        )
        panel.screenshot(
            path=str(ARTIFACTS / f"first-hour-sidebar-{width}-run{run}-{title.lower()}.png")
        )
        where = f"run {run}, {title}"
        scroll = panel.evaluate("p => [p.scrollWidth, p.clientWidth]")
        if scroll[0] > scroll[1] + 1:
            problems.append(f"{where}: the sidebar scrolls sideways ({scroll[0]} > {scroll[1]} px)")
        for item in panel.evaluate(f"root => ({_TEXT_METRICS})(root)"):
            label = f"{item['text']!r} ({item['tag']}.{item['cls']})"
            if item["size"] < SMALLEST_TEXT_PX:
                problems.append(f"{where}: {label} renders at {item['size']} px")
            if item["cut"]:
                problems.append(f"{where}: {label} is cut")
    return problems


def _check_sidebar_at(page: Any, width: int) -> None:
    """Every tab of every run in the sidebar at `width` px: no text under 11 px, no label cut,
    nothing wider than the sidebar but the tables and code that scroll in their own box."""
    panel = page.locator(PANEL)
    _size_sidebar(page, width)
    runs = panel.locator(".jdp-run option").evaluate_all("options => options.map(o => o.value)")
    assert len(runs) >= 3, runs
    problems = []
    for value in runs:
        panel.locator(".jdp-run").select_option(value)
        time.sleep(1.0)  # the kernel sends the run's snapshot
        shown = panel.locator(".jdp-run").evaluate("s => s.selectedOptions[0].textContent")
        problems += _sidebar_problems(panel, width, shown.split(" ")[0])
    panel.locator(".jdp-run").select_option(runs[0])
    assert not problems, f"at {width} px:\n" + "\n".join(problems)


def _check_highlighting(page: Any) -> None:
    """The first agent cell's request reads as prose; a plain cell with the same text is Python,
    and turns to prose as soon as the user types `%%agent` above it."""
    agent_cell = _cell(page, "Which region's permafrost")
    agent = _word_style(agent_cell, REQUEST_WORD)
    agent_cell.screenshot(path=str(ARTIFACTS / "first-hour-agent-cell.png"))

    request = agent_cell.locator(".cm-line").nth(1).inner_text()
    page.evaluate("""async () => {
      const notebook = window.jupyterapp.shell.currentWidget.content;
      notebook.activeCellIndex = notebook.widgets.length - 1;
      await window.jupyterapp.commands.execute('notebook:insert-cell-below');
      await window.jupyterapp.commands.execute('notebook:enter-edit-mode');
    }""")
    page.keyboard.type(request)
    plain_cell = page.locator(".jp-Notebook .jp-Cell").last
    wait_for(
        lambda: plain_cell.locator(".cm-content").inner_text().strip() == request,
        10,
        "the request typed into a new cell",
    )
    time.sleep(0.5)  # the parse runs when the editor is idle
    python = _word_style(plain_cell, REQUEST_WORD)
    assert python["token"], "the plain cell's string is not highlighted at all"
    assert python["color"] != python["lineColor"], python
    assert agent["color"] != python["color"], (agent, python)  # not a Python string
    assert agent["color"] == agent["lineColor"], agent  # the editor's text colour: prose

    page.keyboard.press("Control+Home")
    page.keyboard.type("%%agent")
    page.keyboard.press("Enter")
    time.sleep(0.5)
    typed = _word_style(plain_cell, REQUEST_WORD)
    assert typed["color"] == agent["color"], (typed, agent)
    plain_cell.screenshot(path=str(ARTIFACTS / "first-hour-typed-agent-cell.png"))
    page.keyboard.press("Escape")


def _check_approval(page: Any) -> None:
    """Approve the waiting Python call: the cell then shows one inspector for its turn."""
    cell = _cell(page, "How many stations are there?")
    cell.scroll_into_view_if_needed()
    approve = cell.locator("button", has_text="Approve")
    approve.wait_for(timeout=30_000)
    approve.click()
    from playwright.sync_api import expect

    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text(
        "There are 12 stations", timeout=60_000
    )
    time.sleep(1.0)
    cell.screenshot(path=str(ARTIFACTS / "first-hour-approval-cell.png"))
    inspectors = cell.locator(".jp-Cell-outputArea .jdi-inspector")
    assert inspectors.count() == 1, f"{inspectors.count()} inspectors after Approve, not one"


def _check_results_frame(page: Any) -> None:
    """The subagents' DataFrame fits the cell (or scrolls in a box narrower than the cell) and
    its caption names `agent_results`: the table the delegating agent cell shows."""
    output = page.locator(".jp-Notebook .jp-OutputArea-output").filter(
        has=page.locator(".jdi-frame")
    ).first
    output.scroll_into_view_if_needed()
    output.screenshot(path=str(ARTIFACTS / "first-hour-agent-results.png"))
    fit = output.evaluate("""out => {
      const area = out.closest('.jp-OutputArea');
      const table = out.querySelector('table');
      let box = table;  // the narrowest box around the table that scrolls sideways
      while (box && box !== out.parentElement && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) {
        box = box.parentElement;
      }
      return { table: table ? table.getBoundingClientRect().width : 0,
               output: out.scrollWidth, area: area.clientWidth,
               scroller: box && box !== out.parentElement ? box.getBoundingClientRect().width : null };
    }""")
    assert fit["table"], "no table in the agent_results cell"
    fits = fit["output"] <= fit["area"] + 1
    scrolls_inside = fit["scroller"] is not None and fit["scroller"] <= fit["area"] + 1
    assert fits or scrolls_inside, f"the DataFrame runs off the cell: {fit}"
    caption = output.locator(".jdi-frame-caption")
    assert caption.count() and "agent_results" in caption.first.inner_text(), (
        "the DataFrame has no caption naming agent_results"
    )


def _readme_picture(page: Any, folder: Path) -> None:
    """The report cell's inspector (its Context tab) beside the sidebar on the same run (its
    Prompt tab), for the README: a 1100x700 window, kept small."""
    page.set_viewport_size({"width": 1100, "height": 700})
    page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
    _size_sidebar(page, 340)
    panel = page.locator(PANEL)
    # the runs, last first: the approval's, then the report cell's
    report_run = panel.locator(".jdp-run option").nth(1).get_attribute("value")
    panel.locator(".jdp-run").select_option(report_run)
    time.sleep(1.0)
    panel.locator(".jdi-tabs > label", has_text="Prompt").click()
    panel.locator(".jdp-body details:not(.jdi-static)").evaluate_all(
        "rows => rows.forEach(row => { row.open = false; })"
    )
    panel.evaluate("p => { p.scrollTop = 0; }")
    inspector = _cell(page, "Fetch the daily series").locator(".jdi-inspector")
    inspector.locator("button").first.click()  # open its tabs
    inspector.locator(".lm-TabBar-tab", has_text="Context").click()
    inspector.evaluate("el => el.scrollIntoView({ block: 'start' })")
    time.sleep(0.5)
    folder.mkdir(parents=True, exist_ok=True)
    picture = folder / "inspector-and-sidebar.png"
    page.screenshot(path=str(picture), clip={"x": 0, "y": 0, "width": 1100, "height": 700})
    quantize = shutil.which("pngquant")
    if quantize:
        subprocess.run(
            [
                quantize,
                "--force",
                "--skip-if-larger",
                "--output",
                str(picture),
                "--quality",
                "60-85",
                str(picture),
            ],
            check=False,
            timeout=60,
        )


@pytest.mark.allow_hosts(["127.0.0.1"])
def test_the_quickstart_reads_well_in_jupyterlab_from_a_220_px_sidebar_up(
    lab: tuple[str, Path],
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, _root = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []  # an editor extension that throws leaves cells blank
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            open_notebook(page, url, "quickstart.ipynb")
            # JupyterLab stops its sidebars at 250 px; Notebook 7, a narrow window or the user's
            # own CSS go lower, and the panel must still read at 220 px
            page.add_style_tag(content="body { --jp-sidebar-min-width: 200px !important; }")
            page.locator('.jp-SideBar .lm-TabBar-tab[title="Agent inspector"]').click()
            panel = page.locator(PANEL)
            expect(panel).to_be_visible()
            run_all_cells(page, 300)
            expect(panel.locator(".jdi-summary")).to_contain_text("model call", timeout=20_000)

            _check_highlighting(page)
            assert not errors, errors
            _check_sidebar_at(page, 220)
            _check_sidebar_at(page, 400)
            pictures = os.environ.get("JUPYTER_DEEPAGENT_SCREENSHOTS")
            if pictures:
                _readme_picture(page, ROOT / pictures)
                page.set_viewport_size({"width": 1400, "height": 1000})
                page.evaluate(
                    "() => window.jupyterapp.commands.execute('application:toggle-left-area')"
                )
            # one inspector per turn, the captioned frame: both are reported when both fail
            failures = []
            for check in (_check_approval, _check_results_frame):
                try:
                    check(page)
                except AssertionError as failure:
                    failures.append(str(failure))
            assert not failures, "\n".join(failures)
        finally:
            browser.close()
