"""The sidebar as a user sees it: a real JupyterLab on localhost with the built extension, Debian's
Chromium driven by Playwright, a scripted `%%agent` cell, then the "Agent inspector" panel in the
right sidebar: its views, an artifact opened from it, a second notebook it follows, and a kernel
restart it survives, then the palette command that opens it and its place kept across a reload.
Screenshots go to tests/artifacts/ (ignored by git).

Same set-up and the same loopback-only rules as the inspector's browser test; the extension is
the build in `jupyter_deepagent/labextension` (`make labextension`), put first on JUPYTER_PATH.
"""

from __future__ import annotations

import json
import shutil
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
from test_inspector_browser import ARTIFACTS, FIXTURE

SECOND = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "a1",
            "metadata": {},
            "outputs": [],
            "source": ["%load_ext jupyter_deepagent"],
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "a2",
            "metadata": {},
            "outputs": [],
            "source": ["%agent config model=scripted:scripts/second.yaml"],
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "a3",
            "metadata": {},
            "outputs": [],
            "source": ["%%agent\n", "Say hello from the second notebook."],
        },
    ],
    "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}
SECOND_SCRIPT = (
    "name: scripted-second\nprofile:\n  max_input_tokens: 64000\n"
    "script:\n  - Hello from the second notebook.\n"
)
PANEL = "#jupyter-deepagent-sidebar"


@pytest.fixture
def lab(tmp_path: Path, playwright_ready: None) -> Iterator[tuple[str, Path]]:  # noqa: F811
    """JupyterLab with the built sidebar, on a copy of the inspector's fixture folder plus a
    second notebook; yields its URL and the folder."""
    built = need_built_sidebar()
    root = tmp_path / "lab"
    shutil.copytree(FIXTURE, root)
    (root / "second.ipynb").write_text(json.dumps(SECOND))
    (root / "scripts" / "second.yaml").write_text(SECOND_SCRIPT)
    jupyter_path = tmp_path / "jupyter"
    (jupyter_path / "labextensions").mkdir(parents=True)
    (jupyter_path / "labextensions" / "jupyter-deepagent").symlink_to(built)
    with running_jupyterlab(
        root,
        tmp_path,
        env={"JUPYTER_PATH": str(jupyter_path)},
        args=("--LabApp.expose_app_in_browser=True",),
    ) as url:
        yield url, root


def _tab(panel: Any, title: str) -> None:
    panel.locator(".jdi-tabs > label", has_text=title).click()


def _saved_right_area(page: Any) -> dict[str, Any]:
    """The right sidebar as the layout restorer saved it in the workspace."""
    workspace = page.evaluate("() => fetch('/lab/api/workspaces/default').then(r => r.json())")
    return workspace.get("data", {}).get("layout-restorer:data", {}).get("right", {})


@pytest.mark.allow_hosts(["127.0.0.1"])
def test_the_sidebar_follows_the_notebook_shows_the_run_and_survives_a_restart(
    lab: tuple[str, Path],
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, _root = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            open_notebook(page, url, "inspector.ipynb")

            page.locator('.jp-SideBar .lm-TabBar-tab[title="Agent inspector"]').click()
            panel = page.locator(PANEL)
            expect(panel).to_be_visible()
            expect(panel.locator(".jdp-notebook")).to_have_text("inspector.ipynb")
            expect(panel.locator(".jdp-status")).to_contain_text(
                "%load_ext jupyter_deepagent", timeout=20_000
            )
            panel.screenshot(path=str(ARTIFACTS / "sidebar-not-loaded.png"))

            run_all_cells(page, 120)
            # the run's inspector, from the kernel over the comm
            expect(panel.locator(".jdi-summary")).to_contain_text("model calls", timeout=20_000)
            expect(panel.locator(".jdi-summary")).to_contain_text("ok")
            names = panel.locator(".jdi-section").evaluate_all(
                "els => els.map(e => e.dataset.section)"
            )
            assert {"base", "skills", "filesystem", "subagents"} <= set(names)
            panel.locator(".jdi-section[data-section=skills] summary").click()
            expect(panel.locator(".jdi-section[open] pre")).to_contain_text("station-report")
            page.screenshot(path=str(ARTIFACTS / "sidebar-prompt.png"))

            _tab(panel, "Skills")
            loaded = panel.locator(".jdi-skill[data-loaded=yes]")
            expect(loaded).to_contain_text("station-report")
            expect(loaded).to_contain_text("loaded at step 1")
            panel.screenshot(path=str(ARTIFACTS / "sidebar-skills.png"))

            _tab(panel, "Context")
            gauge = panel.locator(".jdi-gaugebox svg.jdi-gauge")
            expect(gauge).to_be_visible()
            expect(gauge.locator(".jdi-mark-trigger")).to_have_count(1)
            panel.screenshot(path=str(ARTIFACTS / "sidebar-context.png"))

            _tab(panel, "Files")
            artifact = panel.locator(".jdi-file[data-kind=offloaded]")
            expect(artifact).to_contain_text("/large_tool_results/station_table-")
            panel.screenshot(path=str(ARTIFACTS / "sidebar-files.png"))
            artifact.locator(".jdp-open").click()  # opens the file on disk in JupyterLab
            expect(
                page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
            ).to_contain_text("station_table-", timeout=20_000)
            expect(page.locator(".jp-FileEditor, .jp-MainAreaWidget").last).to_contain_text(
                "station,ground_temp_c", timeout=20_000
            )
            page.screenshot(path=str(ARTIFACTS / "sidebar-opened-artifact.png"))

            # a second notebook: the sidebar follows it
            page.evaluate(
                "() => { window.jupyterapp.commands.execute('docmanager:open', "
                "{path: 'second.ipynb'}); }"
            )
            expect(panel.locator(".jdp-notebook")).to_have_text("second.ipynb", timeout=20_000)
            expect(panel.locator(".jdi-summary")).to_have_count(0)
            expect(page.locator(".jp-NotebookPanel:visible .jp-Cell").first).to_contain_text(
                "%load_ext", timeout=60_000
            )
            wait_for(lambda: kernel_idle(page), 60, "the second kernel to start")
            run_all_cells(page, 120)
            expect(panel.locator(".jdi-summary")).to_contain_text("scripted-second", timeout=20_000)
            expect(panel.locator(".jdp-thread")).to_contain_text("second")
            page.screenshot(path=str(ARTIFACTS / "sidebar-second-notebook.png"))

            # back to the first notebook, then a restart: the panel says so and reconnects
            page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="inspector.ipynb").click()
            expect(panel.locator(".jdp-notebook")).to_have_text("inspector.ipynb")
            expect(panel.locator(".jdi-summary")).to_contain_text(
                "scripted-inspector", timeout=20_000
            )
            page.evaluate(
                "() => { window.jupyterapp.commands.execute('notebook:restart-kernel'); }"
            )
            page.locator(".jp-Dialog .jp-mod-accept").click()
            expect(panel.locator(".jdp-status")).to_contain_text(
                "The kernel restarted.", timeout=30_000
            )
            expect(panel.locator(".jdp-status")).to_contain_text("%load_ext jupyter_deepagent")
            panel.screenshot(path=str(ARTIFACTS / "sidebar-restarted.png"))
            wait_for(lambda: kernel_idle(page), 60, "the kernel to restart")
            run_all_cells(page, 120)
            expect(panel.locator(".jdi-summary")).to_contain_text("model calls", timeout=20_000)
            expect(panel).to_have_attribute("data-state", "connected")
            expect(panel.locator(".jdp-run option")).to_have_count(1)  # a new kernel: run 1
            page.screenshot(path=str(ARTIFACTS / "sidebar-reconnected.png"))

            # the palette opens the panel, and the layout keeps it open across a reload
            page.locator('.jp-SideBar .lm-TabBar-tab[title="Agent inspector"]').click()
            expect(panel).to_be_hidden()
            wait_for(
                lambda: _saved_right_area(page).get("collapsed") is True,
                30,
                "the closed sidebar to be saved",
            )
            page.keyboard.press("Control+Shift+C")
            page.locator(".lm-CommandPalette-input").fill("Agent Inspector")
            page.locator(".lm-CommandPalette-item", has_text="Open the Agent Inspector").click()
            expect(panel).to_be_visible()
            wait_for(
                lambda: _saved_right_area(page).get("collapsed") is False,
                30,
                "the open sidebar to be saved",
            )
            page.reload()
            # both notebooks come back; the cells of the one in a background tab are hidden
            page.locator(".jp-Notebook .jp-Cell:visible").first.wait_for(timeout=60_000)
            expect(page.locator(PANEL)).to_be_visible(timeout=20_000)
            expect(page.locator(PANEL).locator(".jdp-notebook")).to_have_text("inspector.ipynb")
            assert _saved_right_area(page).get("current") == PANEL.removeprefix("#")
            page.screenshot(path=str(ARTIFACTS / "sidebar-restored.png"))
        finally:
            browser.close()
