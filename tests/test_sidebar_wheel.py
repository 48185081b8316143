"""pip alone installs the sidebar: the wheel carries the built extension, and a fresh environment
with no Node.js on PATH lists it enabled in `jupyter labextension list`.

Kept lean: the wheel is built without build isolation (the test environment has hatchling and
hatch-jupyter-builder; the extension is already built, so no npm runs), installed with `--no-deps
--no-index`, and the fresh environment borrows JupyterLab from the test environment through a
`.pth` line instead of downloading it. Nothing reaches the network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from sidebar_build import ROOT, need_built_sidebar

EXTENSION = "share/jupyter/labextensions/jupyter-deepagent"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.slow
def test_the_wheel_installs_the_sidebar_enabled_without_node(tmp_path: Path) -> None:
    need_built_sidebar()
    dist = tmp_path / "dist"
    build_env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                 f"{os.environ.get('PATH', '')}"}
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(dist), str(ROOT)],
        capture_output=True, text=True, timeout=600, env=build_env, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    [wheel] = dist.glob("jupyter_deepagent-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    shipped = [n.split(".data/data/", 1)[1] for n in names if ".data/data/" in n]
    assert f"{EXTENSION}/package.json" in shipped and f"{EXTENSION}/install.json" in shipped
    assert any(n.startswith(f"{EXTENSION}/static/remoteEntry.") for n in shipped)

    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(fresh)], check=True, timeout=120)
    python = fresh / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=300, check=False)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (fresh / EXTENSION / "package.json").is_file()
    # JupyterLab itself comes from the test environment (a .pth line), not from the network
    fresh_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    Path(fresh_site, "borrowed-jupyterlab.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    path = str(fresh / "bin")
    assert shutil.which("node", path=path) is None and shutil.which("npm", path=path) is None
    env = {"PATH": path, "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_DATA_DIR": str(tmp_path / "data"), "JUPYTER_PREFER_ENV_PATH": "1"}
    listed = subprocess.run([str(python), "-m", "jupyterlab.labextensions", "list"],
                            capture_output=True, text=True, timeout=120, env=env, check=False)
    text = ANSI.sub("", listed.stdout + listed.stderr)
    assert listed.returncode == 0, text
    sections = re.split(r"\n(?=\S)", text)
    [ours] = [s for s in sections if s.startswith(str(fresh / "share" / "jupyter"))]
    assert re.search(r"jupyter-deepagent v0\.1\.0 enabled\s+OK \(python, jupyter-deepagent\)",
                     ours), text
