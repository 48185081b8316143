"""Where the JupyterLab sidebar's sources and build are, and whether the sidebar tests can run.

Imported by the sidebar tests: `from sidebar_build import ...`. `make test` builds the sidebar
first (`make labextension`: `npm ci`, then `npm run build:prod`); without Node.js the tests that
need it skip, unless JUPYTER_DEEPAGENT_REQUIRE_NODE=1 (as `.ci/run` sets) makes that a failure.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

__all__ = ["BUILT", "LABEXTENSION", "ROOT", "need_built_sidebar", "need_node_modules"]

ROOT = Path(__file__).resolve().parent.parent
LABEXTENSION = ROOT / "labextension"
BUILT = ROOT / "jupyter_deepagent" / "labextension"
REQUIRE = os.environ.get("JUPYTER_DEEPAGENT_REQUIRE_NODE") == "1"
ENABLE = ("install Node.js (20 or later) and run `make labextension`; "
          "JUPYTER_DEEPAGENT_REQUIRE_NODE=1 makes this a failure")


def _missing(what: str) -> None:
    if REQUIRE:
        pytest.fail(f"{what}: {ENABLE}")
    pytest.skip(f"{what}: {ENABLE}")


def need_node_modules() -> str:
    """The npm command, when Node.js and the sidebar's node_modules are there (else skip)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        _missing("the sidebar's tests need Node.js")
    if not (LABEXTENSION / "node_modules" / ".package-lock.json").exists():
        _missing("the sidebar's npm packages are not installed (labextension/node_modules)")
    return str(npm)


def need_built_sidebar() -> Path:
    """The built extension (`jupyter_deepagent/labextension`), when it is there (else skip)."""
    if not (BUILT / "package.json").exists() or not (BUILT / "static" / "style.js").exists():
        _missing("the sidebar is not built (jupyter_deepagent/labextension)")
    return BUILT
