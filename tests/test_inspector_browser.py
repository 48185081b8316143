"""The inspector as a user sees it: a real JupyterLab on localhost, Debian's Chromium driven by
Playwright, a scripted `%%agent` cell, then the inspector opened tab by tab.

Needs `playwright` (the `test` extra) and Chromium at /usr/bin/chromium (`apt-get install -y
chromium`; Playwright's own browser download is not used). Without them the test is skipped, unless
JUPYTER_DEEPAGENT_REQUIRE_BROWSER=1 (as `.ci/run` sets) makes that a failure. Screenshots go to
tests/artifacts/ (ignored by git).

Nothing leaves the machine: JupyterLab listens on 127.0.0.1 with news, update checks and the PyPI
extension manager off, the browser resolves no host but 127.0.0.1 and every request elsewhere is
aborted, and the test's own sockets may reach loopback only.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_under_test import (
    launch_chromium,
    open_notebook,
    playwright_ready,  # noqa: F401 - a fixture
    run_all_cells,
    running_jupyterlab,
)

from jupyter_deepagent.harness.prompt.sections import SECTION_ORDER

FIXTURE = Path(__file__).parent / "fixtures" / "inspector_lab"
ARTIFACTS = Path(__file__).parent / "artifacts"


@pytest.fixture
def lab(tmp_path: Path, playwright_ready: None) -> Iterator[tuple[str, Path]]:
    """JupyterLab on a copy of the fixture folder; yields its URL and the folder."""
    root = tmp_path / "lab"
    shutil.copytree(FIXTURE, root)
    with running_jupyterlab(root, tmp_path) as url:
        yield url, root


@pytest.mark.allow_hosts(["127.0.0.1"])
def test_the_inspector_shows_prompt_skills_an_offloaded_artifact_and_the_gauge(
    lab: tuple[str, Path],
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, root = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 2200})
            open_notebook(page, url, "inspector.ipynb")
            run_all_cells(page, 90)

            cell = page.locator(".jp-Notebook .jp-Cell").last
            expect(cell.locator(".jp-OutputArea-output").first).to_contain_text(
                "✓ read_file /workspace/skills/station-report/SKILL.md")
            inspector = cell.locator(".jdi-inspector")
            expect(inspector).to_have_count(1)
            expect(inspector.locator(".jdi-summary")).to_contain_text("model calls")
            expect(inspector.locator(".jdi-summary svg.jdi-gauge")).to_be_visible()
            inspector.locator("button").first.click()  # open the tabs

            sections = inspector.locator(".jdi-section")
            expect(sections.first).to_be_visible()
            names = sections.evaluate_all("els => els.map(e => e.dataset.section)")
            assert {"base", "skills", "filesystem", "subagents"} <= set(names)
            assert names == [name for name in SECTION_ORDER if name in names]  # in prompt order
            sections.filter(has_text="skills").first.locator("summary").click()
            expect(inspector.locator(".jdi-section[open] pre")).to_contain_text("station-report")
            inspector.screenshot(path=str(ARTIFACTS / "inspector-prompt.png"))

            inspector.locator(".lm-TabBar-tab", has_text="Skills").click()
            loaded = inspector.locator(".jdi-skill[data-loaded=yes]")
            expect(loaded).to_contain_text("station-report")
            expect(loaded).to_contain_text("loaded at step 1")
            expect(inspector.locator(".jdi-skill[data-loaded=no]")).to_contain_text("map-making")
            inspector.screenshot(path=str(ARTIFACTS / "inspector-skills.png"))

            inspector.locator(".lm-TabBar-tab", has_text="Files").click()
            artifact = inspector.locator(".jdi-file[data-kind=offloaded]")
            expect(artifact).to_contain_text("/large_tool_results/station_table-")
            artifact.locator("summary").click()
            expect(artifact.locator("pre")).to_contain_text("station,ground_temp_c")
            inspector.screenshot(path=str(ARTIFACTS / "inspector-files.png"))

            inspector.locator(".lm-TabBar-tab", has_text="Context").click()
            gauge = inspector.locator(".jdi-gaugebox svg.jdi-gauge")
            expect(gauge).to_be_visible()
            expect(gauge.locator(".jdi-mark-trigger")).to_have_count(1)
            expect(inspector.locator("svg.jdi-steps .jdi-mark-offloaded").first).to_be_attached()
            inspector.screenshot(path=str(ARTIFACTS / "inspector-context.png"))

            inspector.locator(".lm-TabBar-tab", has_text="Subagents").click()
            expect(inspector.locator(".jdi-task")).to_contain_text("Check the station table")
            inspector.screenshot(path=str(ARTIFACTS / "inspector-subagents.png"))
            cell.screenshot(path=str(ARTIFACTS / "inspector-cell.png"))
        finally:
            browser.close()
    assert (root / ".deepagent").is_dir()  # the run happened in the temporary copy
