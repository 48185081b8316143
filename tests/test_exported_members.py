"""The public surface: `__all__` is complete, sorted and every name resolves."""

from __future__ import annotations

import importlib
import subprocess
import sys

import jupyter_deepagent


def test_all_is_sorted_and_every_name_resolves() -> None:
    names = [n for n in jupyter_deepagent.__all__ if n != "__version__"]
    assert names == sorted(names)
    for name in names:
        assert getattr(jupyter_deepagent, name) is not None, name


def test_every_module_declares_all() -> None:
    import pkgutil

    for info in pkgutil.walk_packages(jupyter_deepagent.__path__, "jupyter_deepagent."):
        module = importlib.import_module(info.name)
        assert hasattr(module, "__all__") or info.ispkg, f"{info.name} has no __all__"


def test_importing_the_package_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, jupyter_deepagent, jupyter_deepagent.backends;"
        "heavy = [m for m in ('langchain', 'langgraph', 'pandas', 'ipywidgets') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
