"""A real JupyterLab for the browser tests: on 127.0.0.1, a free port, no token, in a scratch
folder of its own (settings, runtime files, IPython's folder), news and update checks off.

Imported by the inspector's and the sidebar's browser tests: `from lab_under_test import ...`.
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

import pytest

__all__ = ["running_jupyterlab"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_jupyterlab(
    root: Path, scratch: Path, *, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
) -> Iterator[str]:
    """Serve `root` until the block ends; yields the server's URL.

    `scratch` holds the server's own files and its log; `env` adds variables, `args` options.
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
    port = _free_port()
    log_path = scratch / "jupyterlab.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         "--allow-root", "--ServerApp.token=", "--ServerApp.password=",
         "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", *args],
        stdout=log, stderr=subprocess.STDOUT, env=environ, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api", timeout=1)
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"JupyterLab exited:\n{log_path.read_text()}")
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 60 s")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
