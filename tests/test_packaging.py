"""What pip gets: the sdist carries the built sidebar, so a wheel builds from it with no Node.js;
the PostgreSQL drivers come only with the `postgres` extra; and `database_url` without them is
one line naming that extra.

Offline and lean: hatchling from the test environment builds the sdist, pip builds the wheel from
the unpacked sdist without build isolation or an index, with a PATH holding only the test
environment's scripts (no `node`, no `npm`), and installs it into a fresh environment with
`--no-deps --no-index`. That environment borrows the test environment's packages through a `.pth`
line; a child there refuses to import the drivers, as a plain install (which has no psycopg, as
the installed metadata says) would.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
from sidebar_build import ROOT, need_built_sidebar

EXTENSION = "share/jupyter/labextensions/jupyter-deepagent"
DRIVERS = ("psycopg", "langgraph-checkpoint-postgres")

_CHILD = r"""
import importlib.abc, importlib.metadata, json, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    # the test environment has the drivers; a plain install has not
    blocked = ("psycopg", "psycopg_pool", "langgraph.checkpoint.postgres", "langgraph.store.postgres")

    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in self.blocked):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
import jupyter_deepagent
from jupyter_deepagent import InputError
from jupyter_deepagent.project.storage.postgres import PostgresStorage

try:
    PostgresStorage("postgresql://researcher@127.0.0.1:9/notes", "database_url")
except InputError as exc:
    error = {"message": str(exc), "source": exc.source}
print(json.dumps({
    "package": jupyter_deepagent.__file__,
    "requires": importlib.metadata.requires("jupyter-deepagent"),
    "error": error,
}))
"""


def _run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(
        args, capture_output=True, text=True, timeout=300, env=env, cwd=cwd, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _plain(requirement: str) -> bool:
    """Whether a `Requires-Dist` line holds without any extra."""
    return "extra ==" not in requirement


@pytest.mark.slow
def test_a_wheel_built_from_the_sdist_without_node_ships_the_sidebar_and_no_drivers(
    tmp_path: Path,
) -> None:
    need_built_sidebar()
    scripts = str(Path(sys.executable).parent)
    env = {"PATH": scripts, "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}
    assert shutil.which("node", path=scripts) is None and shutil.which("npm", path=scripts) is None

    _run(
        [sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path)], env, ROOT
    )
    [sdist] = tmp_path.glob("jupyter_deepagent-*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "src", filter="data")
    [source] = (tmp_path / "src").iterdir()
    assert (source / "jupyter_deepagent" / "labextension" / "static" / "style.js").is_file()

    wheels = tmp_path / "wheels"
    pip_wheel = ["pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    _run([sys.executable, "-m", *pip_wheel, "-w", str(wheels), str(source)], env)
    [wheel] = wheels.glob("jupyter_deepagent-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = [n.split(".data/data/", 1)[1] for n in archive.namelist() if ".data/data/" in n]
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [
            line.split(":", 1)[1].strip()
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    assert f"{EXTENSION}/package.json" in shipped and f"{EXTENSION}/install.json" in shipped
    assert any(n.startswith(f"{EXTENSION}/static/remoteEntry.") for n in shipped)
    for driver in DRIVERS:
        assert not [r for r in requires if r.startswith(driver) and _plain(r)], requires
        assert [r for r in requires if r.startswith(driver) and "extra == 'postgres'" in r]

    fresh = tmp_path / "fresh"
    _run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], env)
    python = fresh / "bin" / "python"
    install = ["pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index"]
    _run([sys.executable, "-m", *install, str(wheel)], env)
    assert (fresh / EXTENSION / "package.json").is_file()
    site = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env
    )
    Path(site.strip(), "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    child = {**env, "PATH": str(fresh / "bin"), "PYTHONNOUSERSITE": "1"}
    found = json.loads(_run([str(python), "-c", _CHILD], child, tmp_path).splitlines()[-1])
    assert found["package"].startswith(str(fresh))  # the wheel's copy, not the checkout
    assert not [r for r in found["requires"] if _plain(r) and r.startswith(DRIVERS)]
    assert found["error"] == {
        "message": "database_url is set, but the PostgreSQL drivers are not installed "
        "(psycopg): pip install 'jupyter-deepagent[postgres]'",
        "source": "database_url",
    }
