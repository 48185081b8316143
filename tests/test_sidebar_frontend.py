"""The sidebar's frontend unit tests (vitest, labextension/test/), run from `make test`: the panel
renders a snapshot, shows an error reply, says how to load the extension, follows a restart."""

from __future__ import annotations

import subprocess

from sidebar_build import LABEXTENSION, need_node_modules


def test_the_sidebar_panel_unit_tests_pass() -> None:
    npm = need_node_modules()
    done = subprocess.run([npm, "test", "--silent"], cwd=LABEXTENSION, capture_output=True,
                          text=True, timeout=300, check=False)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert " passed" in report and " failed" not in report, report
