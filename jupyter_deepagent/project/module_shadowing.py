"""Files that Python would import in place of a module the kernel or the extension loads.

A kernel starts with its notebook's folder first on `sys.path`, so `/workspace/json.py` (or
`numpy/__init__.py`) is what `import json` loads at the next kernel start, before any cell runs;
`ipykernel_launcher.py` is what `python -m ipykernel_launcher` runs, and `jupyter_deepagent.py`
what `%load_ext jupyter_deepagent` imports. `ShadowedModules` names the module such a file would
stand in for, so the workspace guard refuses to let the agent write, edit or delete it.

The names come from the `protected_modules` setting: module names, name patterns (`langchain_*`:
every module whose name starts so), and `<importable>`, which stands for every top-level module
Python finds outside the workspace (the standard library and installed packages) and every one
a package in this process tried to import and did not find (`watch_missed_imports`; a cell's own
imports do not count): the optional modules that pandas, requests or LangChain try (`simplejson`, `brotli`, `socks`, ...) would run from the
notebook's folder at the next kernel's first run, and a list of names kept by hand goes stale. A module file is one ending in a suffix import loads (`.py`, `.pyc`, `.so`,
...), at the top of a folder where a kernel starts (the workspace's top and the notebook's
folder); a package is `<name>/__init__.py` there, and once that exists, every module file under
`<name>/`. Names are compared without regard to case, like the rest of the guard.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable, Sequence
from importlib.machinery import PathFinder, all_suffixes
from types import FrameType

__all__ = ["IMPORTABLE", "ShadowedModules", "missed_imports", "watch_missed_imports"]

IMPORTABLE = "<importable>"
"""In `protected_modules`: every top-level module Python finds outside the workspace (the
standard library and installed packages)."""

_MISSED: set[str] = set()
"""Top-level modules this process tried to import and found nowhere (folded to lower case)."""


class _MissedImports:
    """A finder last on `sys.meta_path`: asked only when every finder before it found nothing,
    it finds nothing either, and remembers the name of a top-level module that a package
    missed. A cell's own `import helpers` (before the user or the agent writes helpers.py) is
    the user's module, not an optional one: not remembered."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> None:
        if path is not None or "." in name:
            return
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            frame = frame.f_back
        if frame is not None and frame.f_globals.get("__name__") == "__main__":
            return  # the importing code is a cell (or the script run)
        _MISSED.add(name.casefold())

    @staticmethod
    def invalidate_caches() -> None:
        """Nothing cached (`importlib.invalidate_caches` asks every finder)."""


def watch_missed_imports() -> None:
    """Start remembering the top-level imports that fail in this process (once; `%load_ext`
    does it before importing anything else, so the first run's optional imports are seen)."""
    if not any(isinstance(finder, _MissedImports) for finder in sys.meta_path):
        sys.meta_path.append(_MissedImports())


def missed_imports() -> frozenset[str]:
    """The top-level modules this process has tried to import and not found (lower case)."""
    return frozenset(_MISSED)


_SUFFIXES = tuple(sorted({suffix.casefold() for suffix in all_suffixes()}, key=len, reverse=True))


def _module_name(filename: str) -> str | None:
    """The module a file of this name is imported as (`json.py` -> `json`), or None."""
    folded = filename.casefold()
    for suffix in _SUFFIXES:
        if folded.endswith(suffix):
            stem = filename[: -len(suffix)]
            return stem if stem.isidentifier() else None
    return None


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@functools.lru_cache(maxsize=8192)
def _found_outside(name: str, root: str) -> bool:
    """Whether `import name` finds a module outside `root`: stdlib, builtin or on `sys.path`
    (without the folders in `root`). Cached: the answer changes only when packages do."""
    for candidate in dict.fromkeys((name, name.casefold())):
        if candidate in sys.stdlib_module_names or candidate in sys.builtin_module_names:
            return True
        path = [
            entry for entry in sys.path if not _within(os.path.realpath(entry or os.curdir), root)
        ]
        try:
            spec = PathFinder.find_spec(candidate, path)
        except (ImportError, ValueError, OSError):  # a broken path entry: not a module
            continue
        if spec is None:
            continue
        places = [spec.origin] if spec.origin else list(spec.submodule_search_locations or [])
        if any(not _within(os.path.realpath(place), root) for place in places if place):
            return True
    return False


@functools.cache
def _namespace_outside(name: str, root: str) -> bool:
    """Whether `name` is a namespace package found outside `root` (such as `google`), which a
    folder of that name without `__init__.py` in the kernel's folder becomes part of."""
    path = [entry for entry in sys.path if not _within(os.path.realpath(entry or os.curdir), root)]
    try:
        spec = PathFinder.find_spec(name, path)
    except (ImportError, ValueError, OSError):
        return False
    return spec is not None and spec.origin is None and bool(spec.submodule_search_locations)


class ShadowedModules:
    """Which module names the agent's files may not stand in for, and where.

    Args:
        names: Module names, `NAME*` for every name that starts with NAME, and `IMPORTABLE` for
            every module found outside `root`.
        root: The workspace's real path (modules found inside it do not count as outside).
        folders: Folders where a kernel starts, as paths from the workspace's top ("" is the
            top itself).
    """

    def __init__(self, names: Iterable[str], root: str, folders: Sequence[str] = ("",)) -> None:
        self.names = tuple(names)
        self.root = os.path.realpath(root)
        self._listed = {
            name.casefold() for name in self.names if name != IMPORTABLE and "*" not in name
        }
        self._prefixes = tuple(
            name[:-1].casefold() for name in self.names if name.endswith("*") and name[:-1]
        )
        self._importable = IMPORTABLE in self.names
        if self._importable:
            watch_missed_imports()
        self._folders = tuple(
            tuple(part.casefold() for part in folder.split("/") if part) for folder in folders
        )

    def protects(self, name: str) -> bool:
        """Whether a file imported as module `name` is refused."""
        folded = name.casefold()
        if folded in self._listed or folded.startswith(self._prefixes):
            return True
        return self._importable and (folded in _MISSED or _found_outside(name, self.root))

    def shadowed(self, parts: Sequence[str]) -> str | None:
        """The module a file at `parts` (names from the workspace's top) would shadow, or None."""
        if not self.names:
            return None
        folded = tuple(part.casefold() for part in parts)
        for folder in self._folders:
            if folded[: len(folder)] != folder or len(parts) <= len(folder):
                continue
            rest = parts[len(folder) :]
            if len(rest) == 1:
                name = _module_name(rest[0])
            elif _module_name(rest[-1]) is None or not rest[0].isidentifier():
                continue
            elif len(rest) == 2 and _module_name(rest[1]) == "__init__":
                name = rest[0]
            else:  # deeper: a module of the package, once the package is there to import, or
                # of a namespace package (`google/genai.py` joins the installed `google.*`)
                package = self._is_package(parts[: len(folder) + 1])
                name = rest[0] if package or _namespace_outside(rest[0], self.root) else None
            if name is not None and self.protects(name):
                return name
        return None

    def _is_package(self, parts: Sequence[str]) -> bool:
        folder = os.path.join(self.root, *parts)
        try:
            return any(_module_name(entry) == "__init__" for entry in os.listdir(folder))
        except OSError:
            return False
