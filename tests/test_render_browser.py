"""Nothing the model writes runs in the page: a real JupyterLab on localhost, Debian's Chromium
driven by Playwright, and a notebook whose scripted agent writes script payloads into every place
the cell shows its text.

The attacker model answers with the payload corpus (streamed, then as its final answer), writes it
to `/outputs/payload.md` and `/outputs/payload.html`, to a file whose name is a payload and to the
memory file that `%agent show` then shows, hands it to a subagent that answers with it too, and
makes a call waiting for approval whose arguments hold it. Every payload sets its own
`window.__pwned_<n>_<where>` flag when it runs. After Run All the test opens every `<details>` and
clicks every link of the outputs (a `javascript:` link runs only when clicked), then asserts: no
flag is set in any page or frame, the outputs hold no `on*` attribute, no script-capable element
and no `javascript:`/`data:` link, and the answer is still formatted (its heading, table, bold
text and code block show).

When the sidebar is built (`make labextension`) it is loaded too and its views are checked the
same way. Same set-up and loopback-only rules as the inspector's browser test; screenshots go to
tests/artifacts/ (ignored by git).
"""

from __future__ import annotations

import json
import os
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
)
from sidebar_build import BUILT, need_built_sidebar
from test_inspector_browser import ARTIFACTS

# Each payload is Markdown (or raw HTML) whose script, if it ever ran, would set `{js}`.
PAYLOADS: list[tuple[str, str]] = [
    ("raw img onerror", '<img src=x onerror="{js}">'),
    ("raw script", "<script>{js}</script>"),
    ("svg onload", '<svg onload="{js}"><circle r="4"></circle></svg>'),
    ("iframe srcdoc", """<iframe srcdoc="<img src=x onerror='parent.{js}'>"></iframe>"""),
    ("details ontoggle", '<details open ontoggle="{js}"><summary>d</summary>x</details>'),
    ("input autofocus onfocus", '<input autofocus onfocus="{js}">'),
    ("video source onerror", '<video><source onerror="{js}"></video>'),
    ("object javascript data", '<object data="javascript:{js}"></object>'),
    ("raw javascript anchor", '<a href="javascript:{js}">raw link</a>'),
    ("backtick in a link destination", '[a](x`) <img src=x onerror="{js}"> `y)'),
    ("decimal entity javascript link", "[dec](&#106;avascript:{js})"),
    ("hex entity javascript link", "[hex](&#x6A;avascript:{js})"),
    ("colon entity javascript link", "[colon](javascript&colon;{js})"),
    ("reference link to javascript", "[ref][r{n}]\n\n[r{n}]: &#106;avascript:{js}"),
    ("autolink to javascript", "<javascript:{js}>"),
    ("code span across a heading", '`open\n## heading <img src=x onerror="{js}"> `'),
    ("code span across a quote", '`open\n> quote <img src=x onerror="{js}"> `'),
    ("code span across a list item", '`open\n- item <img src=x onerror="{js}"> `'),
    ("code span across a rule", '`open\n***\n<img src=x onerror="{js}"> `'),
    ("code span across a table cell",
     '| a | b |\n|---|---|\n| `x | <img src=x onerror="{js}"> ` |'),
    ("tag inside math", '$<img src=x onerror="{js}">$ and $$<img src=x onerror="{js}">$$'),
    ("comment trick", '<!--><img src=x onerror="{js}">-->'),
    ("noscript mXSS", """<noscript><p title="</noscript><img src=x onerror='{js}'>"></noscript>"""),
    ("style tag breakout", '<style></style><img src=x onerror="{js}">'),
    # the fences below end outside code for both the page's parser and the old escaper, so
    # that one payload does not decide whether the next runs
    ("fence that closes the show fence", '````\n</details><img src=x onerror="{js}">\n````'),
    ("fence closed by ```~", '```\n```~\n<img src=x onerror="{js}">\n```'),
    ("fence in a list item, ended by dedent", '- item\n   ```\n<img src=x onerror="{js}">\n```'),
    ("closing fence indented 5 spaces in a list",
     '- item\n\n  ```\n  x\n     ```\n<img src=x onerror="{js}">\n```'),
    ("4-space indented fence", '    ```\n<img src=x onerror="{js}">\n    ```'),
    ("math svg mXSS", '<math><mtext><table><mglyph><style><img src=x onerror="{js}">'),
]
"""The payload corpus: (what it tries, its text)."""

FORMATTED = (
    "## Payload report\n\n"
    "The **stations agree** with the table.\n\n"
    "| station | warming |\n|---|---|\n| Svalbard | 0.7 |\n| Abisko | 0.3 |\n\n"
    "```python\nprint('still code')\n```\n\n"
)


def corpus(where: str) -> str:
    """Every payload, as Markdown paragraphs; payload n sets `window.__pwned_<n>_<where>`."""
    parts = []
    for n, (_, text) in enumerate(PAYLOADS, 1):
        parts.append(text.format(js=f"window.__pwned_{n}_{where}=1", n=f"{n}{where}"))
    return "\n\n".join(parts) + "\n"


NAMED_BY_A_PAYLOAD = "/outputs/x<img src=x onerror='window.__pwned_filename=1'>.md"


def _filler(words: int) -> str:
    return " ".join(["streaming"] * words) + "\n"


def _scripts() -> dict[str, dict[str, Any]]:
    """The attacker model's scripts: the run that answers, and the one that waits for approval."""
    answer = {
        "name": "scripted-attacker",
        "profile": {"max_input_tokens": 128000},
        "rules": [{"when": "Check the payloads.", "reply": corpus("subagent"), "repeat": True}],
        "script": [
            {"content": corpus("stream") + _filler(60), "tool_calls": [
                {"name": "write_file",
                 "args": {"file_path": "/outputs/payload.md", "content": corpus("outputs_md")}},
                {"name": "write_file",
                 "args": {"file_path": "/outputs/payload.html", "content": corpus("outputs_html")}},
                {"name": "write_file",
                 "args": {"file_path": NAMED_BY_A_PAYLOAD,
                          "content": "a file whose name is a payload\n"}},
                {"name": "write_file",
                 "args": {"file_path": "/memories/AGENTS.md", "content": corpus("memory")}},
                {"name": "task",
                 "args": {"description": "Check the payloads.\n\n" + corpus("task"),
                          "subagent_type": "general-purpose"}},
            ]},
            FORMATTED + corpus("answer") + _filler(60),
        ],
    }
    approval = {
        "name": "scripted-approval",
        "profile": {"max_input_tokens": 128000},
        "script": [
            {"content": "", "tool_calls": [
                {"name": "write_file",
                 "args": {"file_path": "/workspace/approval.md", "content": corpus("approval")}},
            ]},
            "Not reached: the call waits for approval.",
        ],
    }
    return {"answer.json": answer, "approval.json": approval}


# A model that types: a pause after every streamed word, so the cell shows the streamed answer
# part by part, as it shows a real model's, before the final answer replaces it.
SLOW_TYPIST = '''\
import time

from jupyter_deepagent.harness.models.scripted_model import ScriptedChatModel
from jupyter_deepagent.jupyter.magic.magics import get_session


class SlowTypist(ScriptedChatModel):
    def _stream(self, *args, **kwargs):
        for chunk in super()._stream(*args, **kwargs):
            time.sleep(0.005)
            yield chunk


get_session().configure(model=SlowTypist.from_file("scripts/answer.json"))
'''

CELLS = [
    "%load_ext jupyter_deepagent",
    "%agent config memory=/memories/AGENTS.md",
    SLOW_TYPIST,
    "%%agent\nReport on the stations.",
    "%agent show",
    "%agent config interrupt_on=write_file",
    "%%agent -m scripted:scripts/approval.json\nSave the report to the workspace.",
]


def _notebook() -> dict[str, Any]:
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{index}", "metadata": {},
              "outputs": [], "source": source} for index, source in enumerate(CELLS)]
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"}}}


@pytest.fixture
def lab(tmp_path: Path, playwright_ready: None) -> Iterator[tuple[str, bool]]:  # noqa: F811
    """JupyterLab on a folder holding the attacker's notebook and scripts, with the sidebar when
    it is built; yields its URL and whether the sidebar is there."""
    root = tmp_path / "lab"
    (root / "scripts").mkdir(parents=True)
    for name, script in _scripts().items():
        (root / "scripts" / name).write_text(json.dumps(script, indent=1))
    (root / "payloads.ipynb").write_text(json.dumps(_notebook()))
    # every cell rendered in full, never windowed: all outputs are in the page to be checked
    notebook_settings = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    notebook_settings.mkdir(parents=True)
    (notebook_settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env: dict[str, str] = {}
    sidebar = (BUILT / "package.json").exists() or os.environ.get(
        "JUPYTER_DEEPAGENT_REQUIRE_NODE") == "1"
    if sidebar:
        jupyter_path = tmp_path / "jupyter"
        (jupyter_path / "labextensions").mkdir(parents=True)
        (jupyter_path / "labextensions" / "jupyter-deepagent").symlink_to(need_built_sidebar())
        env["JUPYTER_PATH"] = str(jupyter_path)
    with running_jupyterlab(root, tmp_path, env=env) as url:
        yield url, sidebar


# Flags set by any payload, in every page and frame (a javascript: link opened in a new window
# runs there).
FLAGS = "() => Object.keys(window).filter(k => k.startsWith('__pwned'))"

# What must not be in the outputs after the page rendered them: an event attribute, an element
# that can run script or load a page, a javascript:/data:/vbscript: link.
LIVE_MARKUP = r"""(roots) => {
  const found = [];
  const bad = /^(javascript|vbscript|data):/;
  const plain = (v) => (v || '').replace(/[\u0000-\u0020]/g, '').toLowerCase();
  for (const root of document.querySelectorAll(roots)) {
    for (const el of root.querySelectorAll('*')) {
      const name = el.localName;
      for (const attr of el.attributes) {
        const key = attr.name.toLowerCase();
        if (key.startsWith('on')) found.push(`<${name} ${key}>`);
        if (['href', 'xlink:href', 'src', 'action', 'formaction', 'data'].includes(key)
            && bad.test(plain(attr.value)) && !(name === 'img' && key === 'src'
                                                && plain(attr.value).startsWith('data:image/')))
          found.push(`<${name} ${key}=${attr.value.slice(0, 40)}>`);
      }
      if (['script', 'object', 'embed', 'frame', 'base', 'form'].includes(name))
        found.push(`<${name}>`);
      const sandbox = el.getAttribute('sandbox');
      if (name === 'iframe' && (sandbox === null || /allow-(scripts|same-origin)/.test(sandbox)))
        found.push('<iframe> without a closed sandbox');
    }
  }
  return found;
}"""

# Open every closed <details> of the outputs, as a user reading them does (a toggle handler runs
# then).
OPEN_DETAILS = r"""(roots) => {
  for (const root of document.querySelectorAll(roots))
    for (const details of root.querySelectorAll('details:not([open])')) details.open = true;
}"""

# The links a click could make run script: all but plain same-tab http(s)/mailto ones (those
# cannot run script here, and following one would leave the page).
CLICKABLE = r"""(roots) => {
  const links = [];
  for (const root of document.querySelectorAll(roots)) {
    for (const a of root.querySelectorAll('a[href], area[href]')) {
      const plainLink = ['http:', 'https:', 'mailto:'].includes(a.protocol);
      if (!plainLink || a.target === '_blank') links.push(a);
    }
  }
  return links;
}"""


def _click_links(page: Any, roots: str) -> int:
    """Click, as a user does (a real mouse click, which may open a window), every link in `roots`
    that a click could make run script; returns how many were clicked."""
    links = page.evaluate_handle(CLICKABLE, roots)
    clicked = 0
    for index in range(int(links.evaluate("l => l.length"))):
        link = links.evaluate_handle("(l, i) => l[i]", index).as_element()
        try:
            link.scroll_into_view_if_needed(timeout=2000)
            link.click(timeout=2000, force=True, no_wait_after=True)
        except Exception:  # a link hidden in a closed view cannot be clicked
            link.evaluate("a => a.click()")
        clicked += 1
    return clicked


OUTPUTS = ".jp-Cell-outputArea"
PANEL = "#jupyter-deepagent-sidebar"


def _all_flags(context: Any) -> set[str]:
    """The flags set in any page (a link may have opened one) or frame of the browser."""
    flags: set[str] = set()
    for page in context.pages:
        for frame in page.frames:
            try:
                flags.update(frame.evaluate(FLAGS))
            except Exception:  # a frame that went away holds no flag
                continue
    return flags


def _which_ran(flags: set[str]) -> str:
    """The payloads whose flags are set, each with the places it ran in."""
    places: dict[str, list[str]] = {}
    for flag in sorted(flags):
        number, _, where = flag.removeprefix("__pwned_").partition("_")
        name = PAYLOADS[int(number) - 1][0] if number.isdigit() else number
        places.setdefault(name, []).append(where or "-")
    return "; ".join(f"{name} ({', '.join(where)})" for name, where in places.items())


@pytest.mark.allow_hosts(["127.0.0.1"])
def test_no_payload_the_model_writes_runs_script_in_jupyterlab(lab: tuple[str, bool]) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, sidebar = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1400})
            page = context.new_page()
            open_notebook(page, url, "payloads.ipynb")
            run_all_cells(page, 120)

            cells = page.locator(".jp-Notebook .jp-Cell")
            answer = cells.nth(3)
            expect(answer.locator("h2", has_text="Payload report")).to_be_visible()
            expect(answer.locator("table", has_text="Svalbard").first).to_be_visible()
            expect(answer.locator("strong", has_text="stations agree")).to_be_visible()
            expect(answer.locator("pre", has_text="still code").first).to_be_visible()
            expect(answer.locator(OUTPUTS)).to_contain_text("/outputs/payload.md")
            expect(cells.nth(4).locator(OUTPUTS)).to_contain_text("/memories/AGENTS.md")
            expect(cells.nth(6).locator(OUTPUTS)).to_contain_text("Waiting for your approval")
            page.set_viewport_size({"width": 1400, "height": 4500})  # a cell fits in the view
            for name, index in [("answer", 3), ("show", 4), ("approval", 6)]:
                cells.nth(index).evaluate("e => e.scrollIntoView({block: 'start'})")
                cells.nth(index).screenshot(path=str(ARTIFACTS / f"render-{name}.png"))
            page.set_viewport_size({"width": 1400, "height": 1400})

            roots = OUTPUTS
            if sidebar:
                page.locator('.jp-SideBar .lm-TabBar-tab[title="Agent inspector"]').click()
                panel = page.locator(PANEL)
                expect(panel.locator(".jdi-summary")).to_be_visible(timeout=20_000)
                panel.locator(".jdp-run").select_option("1")  # the run that answered
                expect(panel.locator(".jdi-summary")).to_contain_text("ok")
                for label in panel.locator(".jdi-tabs > label").all():
                    label.click()  # every view: the last one, Subagents, holds the task
                expect(panel.locator(".jdi-task").first).to_contain_text("Check the payloads")
                roots = f"{OUTPUTS}, {PANEL}"

            page.evaluate(OPEN_DETAILS, roots)
            clicked = _click_links(page, roots)
            page.wait_for_timeout(1000)  # let a clicked link or a late handler run
            flags = _all_flags(context)
            live = page.evaluate(LIVE_MARKUP, roots)
            page.screenshot(path=str(ARTIFACTS / "render-page.png"), full_page=True)
        finally:
            browser.close()
    assert not flags, f"script ran ({clicked} links clicked): {_which_ran(flags)}"
    assert not live, f"live markup in the outputs: {sorted(set(live))}"
