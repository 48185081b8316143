"""A real JupyterLab for the browser tests: on 127.0.0.1, a free port, no token, in a scratch
folder of its own (settings, runtime files, IPython's folder), news and update checks off; and
Debian's Chromium driven by Playwright, resolving no host but 127.0.0.1.

Imported by the inspector's and the sidebar's browser tests: `from lab_under_test import ...`.
`free_port` and `wait_until_answering` serve any test that starts a local server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "free_port",
    "kernel_idle",
    "launch_chromium",
    "open_notebook",
    "playwright_ready",
    "run_all_cells",
    "running_jupyterlab",
    "wait_for",
    "wait_until_answering",
]

CHROMIUM = Path("/usr/bin/chromium")
REQUIRE = os.environ.get("JUPYTER_DEEPAGENT_REQUIRE_BROWSER") == "1"
ENABLE = ("apt-get install -y chromium and pip install -e '.[test]' (playwright) to run it; "
          "JUPYTER_DEEPAGENT_REQUIRE_BROWSER=1 makes a missing browser a failure")


def free_port() -> int:
    """A port of 127.0.0.1 free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_answering(
    url: str, process: subprocess.Popen, log_path: Path, name: str, seconds: float
) -> None:
    """Return once `url` answers; fail the test, with the server's log, if `process` exits or
    `seconds` pass first."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if process.poll() is not None:
                pytest.fail(f"{name} exited:\n{log_path.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"{name} did not answer in {seconds:.0f} s:\n{log_path.read_text()}")
            time.sleep(0.5)


def _browser_missing() -> str | None:
    if not CHROMIUM.exists():
        return f"the browser test needs Chromium at {CHROMIUM}: {ENABLE}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return f"the browser test needs playwright: {ENABLE}"
    return None


@pytest.fixture(scope="module")
def playwright_ready() -> None:
    """Skip without Chromium or Playwright (fail under JUPYTER_DEEPAGENT_REQUIRE_BROWSER=1)."""
    missing = _browser_missing()
    if missing is None:
        return
    if REQUIRE:
        pytest.fail(missing)
    pytest.skip(missing)


def kernel_idle(page: Any) -> bool:
    """The kernel is idle and no cell of the open notebook is queued or running."""
    status = page.evaluate(
        "() => (document.querySelector('#jp-main-statusbar') || {}).innerText || ''")
    prompts = page.evaluate(
        "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell')).map(c => "
        "((c.querySelector('.jp-InputArea-prompt') || {}).textContent || ''))")
    return "Idle" in status and not any("*" in p for p in prompts)


def wait_for(condition: Any, seconds: float, what: str) -> None:
    """Poll `condition` until it holds; fail the test after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}")


def _loopback_only(route: Any) -> None:
    if route.request.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")):
        route.continue_()
    else:
        route.abort()


def launch_chromium(playwright: Any) -> Any:
    """Debian's headless Chromium, resolving no host but 127.0.0.1."""
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), headless=True,
        args=["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])


def open_notebook(page: Any, url: str, name: str) -> None:
    """Open notebook `name` in the lab at `url` (loopback requests only); wait for its kernel."""
    page.route("**/*", _loopback_only)
    page.goto(f"{url}/lab/tree/{name}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    wait_for(lambda: kernel_idle(page), 60, "the kernel to start")


def run_all_cells(page: Any, seconds: float) -> None:
    """Run > Run All Cells, then wait until the notebook has run."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    time.sleep(1.0)
    wait_for(lambda: kernel_idle(page), seconds, "the notebook to run")


@contextmanager
def running_jupyterlab(
    root: Path, scratch: Path, *, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
) -> Iterator[str]:
    """Serve `root` until the block ends; yields the server's URL.

    `scratch` holds the server's own files, its log and its workspaces (so the layout a test
    leaves, such as an open sidebar panel, never reaches another); `env` adds variables, `args`
    options.
    The model keys of the environment are left out, so nothing can reach a provider.
    """
    settings = scratch / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    environ = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    environ.update(JUPYTERLAB_SETTINGS_DIR=str(scratch / "settings"),
                   JUPYTER_RUNTIME_DIR=str(scratch / "runtime"),
                   IPYTHONDIR=str(scratch / "ipython"), PYDEVD_DISABLE_FILE_VALIDATION="1",
                   **(env or {}))
    port = free_port()
    log_path = scratch / "jupyterlab.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         "--allow-root", "--ServerApp.token=", "--ServerApp.password=",
         "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         f"--LabApp.workspaces_dir={scratch / 'workspaces'}", *args],
        stdout=log, stderr=subprocess.STDOUT, env=environ, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(f"{url}/api", server, log_path, "JupyterLab", 60)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
