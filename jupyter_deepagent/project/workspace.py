"""The `/workspace/` guard: the notebook's folder as the agent sees it, whoever serves it.

`GuardedFolder` hides the state folder, env files, credential files and `hidden_paths`; keeps
settings files, `protected_paths` and the files that would shadow `protected_modules` read-only;
and masks secrets in what it reads, except text the agent wrote itself. The kernel and LangGraph
Server mount it the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from fnmatch import fnmatchcase, translate
from pathlib import Path
from typing import TypeVar

from jupyter_deepagent._exceptions import BackendError, BinaryFile, FileTooLarge, PermissionDenied
from jupyter_deepagent.backends import every_file, file_filter_matches, normalize_virtual_path
from jupyter_deepagent.backends.disk import DiskBackend
from jupyter_deepagent.backends.protocol import (
    DEFAULT_READ_LIMIT,
    AsyncBackendMixin,
    EditResult,
    FileInfo,
    GrepMatch,
    ReadResult,
    WriteResult,
)
from jupyter_deepagent.backends.skipped_files import note_skipped_file
from jupyter_deepagent.project.module_shadowing import ShadowedModules
from jupyter_deepagent.project.secrets.masked_text import (
    AgentTexts,
    MaskedTexts,
    file_identity,
    masked_grep,
)
from jupyter_deepagent.project.secrets.redaction import Redactor
from jupyter_deepagent.project.settings.agent_config import (
    CONFIG_FILE_NAMES,
    DEFAULT_HIDDEN_PATHS,
    DEFAULT_PROTECTED_MODULES,
    DEFAULT_PROTECTED_PATHS,
)
from jupyter_deepagent.trace.research_log.log import LOG_SUFFIX

__all__ = ["GuardedFolder", "kernel_folders_below"]

_Listed = TypeVar("_Listed", FileInfo, GrepMatch)

_PROTECTED_NAMES = CONFIG_FILE_NAMES
"""Files the agent may read but never write, edit or delete: they hold the agent's settings."""


def _is_secret_name(name: str) -> bool:
    name = name.casefold()
    return name.startswith(".env") or name == ".deepagent"


def _same_or_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _key(real: str) -> str:
    """A real path compared without regard to case (a case-insensitive disk accepts `.ENV`)."""
    return os.path.normcase(real).casefold()


class _PathPatterns:
    """Names (`.git`, `*.pth`: at any depth) and paths from the top (`tools/deploy.sh`), matched
    without regard to case against a path or any folder above it; compiled once."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = tuple(patterns)
        wanted = [(p, p.strip("/").casefold()) for p in self.patterns if p.strip("/")]
        self._names = [(p, w) for p, w in wanted if "/" not in w]
        self._paths = [(p, w) for p, w in wanted if "/" in w]
        self._any_name = _one_regex(w for _, w in self._names)
        self._any_path = _one_regex(w for _, w in self._paths)

    def first(self, folded: list[str]) -> str | None:
        """The first pattern naming the path (`folded`: its names, casefolded), or None."""
        if self._any_name is not None and any(self._any_name.match(n) for n in folded):
            return next(p for p, w in self._names if any(fnmatchcase(n, w) for n in folded))
        if self._any_path is not None:
            above = ["/".join(folded[:n]) for n in range(1, len(folded) + 1)]
            if any(self._any_path.match(path) for path in above):
                return next(p for p, w in self._paths if any(fnmatchcase(a, w) for a in above))
        return None


def _one_regex(patterns: Iterable[str]) -> re.Pattern[str] | None:
    translated = [translate(pattern) for pattern in patterns]
    return re.compile("|".join(translated)) if translated else None


_LARGEST_OWN_NOTEBOOK = 16_000_000
"""Bytes: a larger notebook is not read to see whether the agent wrote it (it is the user's)."""


class GuardedFolder(AsyncBackendMixin):
    """A folder on disk with some paths hidden from the agent and some it may not change.

    Hidden (refused by read, write, edit and delete; left out of ls, glob and grep): any `.env*`
    file or `.deepagent` folder, the names in `hidden_paths` (version-control internals by
    default), and the real paths in `hidden` (the configured env file and state folder).
    Protected (readable, but never written, edited or deleted): `.deepagent.toml` and
    `pyproject.toml`, whose settings every run reads, and the names in `protected_paths` (places
    where a write becomes code that runs unread, see `DEFAULT_PROTECTED_PATHS`), and the files
    Python would import in place of a module named in `protected_modules` (see
    `module_shadowing`), at the top and in each of `kernel_folders`. Both are decided
    on the path as written and again on the real path the `DiskBackend` resolved and is about to
    use (so a symlink swapped in between cannot dodge them), without regard to case: a link
    `config.txt -> .env` or `.ENV` stays hidden, and a folder holding a hidden or protected file
    cannot be deleted.

    Secrets are masked with `redact`, and the agent only ever works on the masked text: read
    pages it, grep matches and counts in it, and an edit finds its text in it and is refused
    when a line it touches holds a mask (see `secrets.masked_text`). So no sequence of calls reveals a
    masked value. A file whose text is exactly what the agent wrote is read back as written.

    Args:
        backend: The `DiskBackend` on the folder.
        hidden: Real paths (files or folders) to hide besides the `.env*` and `.deepagent` names.
        redact: Masks secrets (a `Redactor` masks exactly the secret; any other function masks
            whole lines it would change).
        hidden_paths: Names (at any depth) or paths from the top to hide.
        protected_paths: Names (at any depth) or paths from the top the agent may only read.
        protected_modules: Module names (`<importable>`: every standard or installed module)
            whose module files the agent may only read where a kernel starts.
        kernel_folders: Folders besides the top where a kernel starts (the notebook's), as
            paths from the top.
        agent_texts: The record of what the agent wrote here, read back unmasked (the session
            keeps one across runs); by default this folder's own.
    """

    def __init__(
        self,
        backend: DiskBackend,
        hidden: tuple[str | os.PathLike[str], ...] = (),
        redact: Callable[[str], str] | None = None,
        *,
        hidden_paths: tuple[str, ...] = DEFAULT_HIDDEN_PATHS,
        protected_paths: tuple[str, ...] = DEFAULT_PROTECTED_PATHS,
        protected_modules: tuple[str, ...] = DEFAULT_PROTECTED_MODULES,
        kernel_folders: tuple[str, ...] = (),
        agent_texts: AgentTexts | None = None,
    ) -> None:
        self.root = os.path.realpath(backend.root)
        self.hidden = tuple(_key(os.path.realpath(path)) for path in hidden)
        self.hidden_paths = tuple(hidden_paths)
        self.protected_paths = tuple(protected_paths)
        self._hidden_patterns = _PathPatterns(self.hidden_paths)
        self._protected_patterns = _PathPatterns(self.protected_paths)
        self.protected_modules = tuple(protected_modules)
        self._modules = ShadowedModules(self.protected_modules, self.root, ("", *kernel_folders))
        self.backend = backend.with_guard(self.refusal)
        self.redact = redact
        self._masked = MaskedTexts(own=agent_texts, place=self._file_identity)

    # -- deciding --------------------------------------------------------------------------------
    def refusal(
        self, virtual: str, parts: tuple[str, ...], change: bool
    ) -> PermissionDenied | None:
        """Why the agent may not use a path (None if it may); see `PathGuard`.

        Args:
            virtual: The path as the agent wrote it, for the message.
            parts: The names of the path below the folder (as written, or real after symlinks).
            change: The call would write, edit or delete it.
        """
        folded = [part.casefold() for part in parts]
        real = _key(os.path.join(self.root, *parts))
        if (
            any(_is_secret_name(name) for name in folded)
            or self._hidden_patterns.first(folded) is not None
            or any(_same_or_within(real, hidden) for hidden in self.hidden)
        ):
            msg = (
                f"{virtual} is off limits: .env files, credential files (.pgpass, .ssh, ...), "
                "version-control folders such as .git, and the agent's own state folder are "
                "hidden from the agent (setting: hidden_paths)."
            )
            return PermissionDenied(msg, path=virtual)
        if not change:
            return None
        if folded and folded[-1] in _PROTECTED_NAMES:
            msg = (
                f"Cannot change {virtual}: it holds the notebook agent's settings, and only the "
                "user can change settings (in the file, or with %agent config). Ask the user."
            )
            return PermissionDenied(msg, path=virtual)
        if folded and folded[-1].endswith(LOG_SUFFIX):
            msg = (
                f"Cannot change {virtual}: it is a notebook's research log, the record of every "
                "agent run; only the notebook's runs append to it."
            )
            return PermissionDenied(msg, path=virtual)
        pattern = self._protected_patterns.first(folded)
        if pattern is not None:
            msg = (
                f"Cannot change {virtual}: it is a protected path ({pattern}), where a change "
                "could run as code on the user's machine without them reading it. You may read "
                "it; ask the user to make the change (only they can change the protected_paths "
                "setting)."
            )
            return PermissionDenied(msg, path=virtual)
        if folded and folded[-1].endswith(".ipynb") and not self._own_notebook(parts):
            msg = (
                f"Cannot change {virtual}: it is a notebook, the user's work with its outputs "
                "(this one or another), and a write would replace all of it. Write a new "
                "notebook under another name, or propose cells with propose_cell."
            )
            return PermissionDenied(msg, path=virtual)
        environment = self._environment_above(parts)
        if environment is not None:
            msg = (
                f"Cannot change {virtual}: it is inside a Python environment (the folder "
                f"{environment}/ holds pyvenv.cfg or conda-meta), whose packages and activation scripts run "
                "as code whenever it is used. You may read it; ask the user to change it."
            )
            return PermissionDenied(msg, path=virtual)
        module = self._modules.shadowed(parts)
        if module is not None:
            msg = (
                f"Cannot change {virtual}: Python would import it instead of the module "
                f"{module!r} (the folder where a kernel starts comes first on the import path), "
                "so it would run as code at the next kernel start or import without the user "
                f"reading it. Choose another name (such as my_{module}); only the user can "
                "change the protected_modules setting."
            )
            return PermissionDenied(msg, path=virtual)
        return None

    def _own_notebook(self, parts: tuple[str, ...]) -> bool:
        """Whether the agent may change the notebook at `parts`: none is there yet, or it holds
        exactly the text the agent wrote to it (a notebook it made in this kernel, not the
        user's)."""
        path = os.path.join(self.root, *parts)
        if not os.path.lexists(path):
            return True
        try:
            if os.path.getsize(path) > _LARGEST_OWN_NOTEBOOK:
                return False
            with open(path, encoding="utf-8", errors="surrogateescape") as stream:
                return self._masked.owns("/" + "/".join(parts), stream.read())
        except OSError:
            return False

    def _file_identity(self, virtual: str) -> tuple[int, int, int] | None:
        """The identity on disk of the file at `virtual` (`file_identity`)."""
        return file_identity(
            os.path.join(self.root, *(part for part in virtual.split("/") if part))
        )

    def _environment_above(self, parts: tuple[str, ...]) -> str | None:
        """The folder above `parts` (names from the top) that is a Python environment, a
        virtualenv of any name (`pyvenv.cfg`) or a conda one (`conda-meta/`), as a path from the
        top (`env`); None when there is none."""
        folder = self.root
        for depth, name in enumerate(parts[:-1], start=1):
            folder = os.path.join(folder, name)
            if os.path.isfile(os.path.join(folder, "pyvenv.cfg")) or os.path.isdir(
                os.path.join(folder, "conda-meta")
            ):
                return "/".join(parts[:depth])
        return None

    def _check(self, path: str, *, change: bool = False) -> str:
        virtual = normalize_virtual_path(path)
        refusal = self.refusal(virtual, tuple(part for part in virtual.split("/") if part), change)
        if refusal is not None:
            raise refusal
        return path

    def _check_change(self, path: str) -> str:
        return self._check(path, change=True)

    def _is_hidden(self, path: str) -> bool:
        parts = tuple(part for part in path.split("/") if part)
        return self.refusal(path, parts, False) is not None

    def _visible(self, items: list[_Listed]) -> list[_Listed]:
        hidden: dict[str, bool] = {}  # one check per file, however many lines of it matched
        for item in items:
            if item.path not in hidden:
                hidden[item.path] = self._is_hidden(item.path)
        return [item for item in items if not hidden[item.path]]

    def _redactor(self) -> Callable[[str], str] | None:
        """The masking of one call: a `Redactor` gathers its secret values once for all files."""
        return self.redact.frozen() if isinstance(self.redact, Redactor) else self.redact

    # -- the protocol ----------------------------------------------------------------------------
    def ls(self, path: str = "/") -> list[FileInfo]:
        """List a folder, leaving hidden entries out."""
        return self._visible(self.backend.ls(self._check(path)))

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read a file unless it is hidden; secrets in it are masked."""
        if self.redact is None:
            return self.backend.read(self._check(path), offset, limit)
        virtual = normalize_virtual_path(self._check(path))
        raw = self.backend.read_text(path)
        text = self._masked.get(virtual, raw, self._redactor()).text
        return ReadResult.from_text(virtual, text, offset, limit)

    def write(self, path: str, content: str) -> WriteResult:
        """Write a file unless it is hidden or protected (the agent reads it back as written)."""
        virtual = normalize_virtual_path(self._check_change(path))
        replaced = self._masked.place(virtual)
        result = self.backend.write(path, content)
        self._masked.wrote(virtual, content, replaced=replaced)
        return result

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Edit a file unless it is hidden or protected; `old` is found in the masked text, and
        an edit touching a line that holds a masked secret is refused."""
        self._check_change(path)
        if self.redact is None:
            return self.backend.edit(path, old, new, replace_all)
        virtual = normalize_virtual_path(path)
        if getattr(self.backend, "read_only", False):
            return self.backend.edit(path, old, new, replace_all)  # refused, with its message
        shown = self._masked.get(virtual, self.backend.read_text(path), self._redactor())
        text, count = shown.edited(virtual, old, new, replace_all)
        own = self._masked.owns(virtual, shown.raw)  # the agent's own text stays its own
        replaced = self._masked.place(virtual)
        self.backend.write(path, text)
        if own:
            self._masked.wrote(virtual, text, replaced=replaced)
        return EditResult(path=virtual, replacements=count)

    def delete(self, path: str) -> None:
        """Delete a file or folder unless it is, or holds, something hidden or protected."""
        virtual = normalize_virtual_path(self._check_change(path))
        try:  # each file's identity on disk could be reused
            gone = [info.path for info in every_file(self.backend, virtual)]
        except BackendError:  # nothing there: the delete says so
            gone = []
        for file_path in (virtual, *gone):
            self._masked.forget(file_path)
        self.backend.delete(path)

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Matching files, hidden ones left out."""
        return self._visible(self.backend.glob(pattern, self._check(path)))

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Matching lines, never from hidden files, matched against the masked text."""
        if self.redact is None:
            return self._visible(self.backend.grep(pattern, self._check(path), glob, regex))
        listed = self._visible(every_file(self.backend, self._check(path)))
        virtual = normalize_virtual_path(path)
        single = len(listed) == 1 and listed[0].path == virtual
        root = (virtual.rsplit("/", 1)[0] or "/") if single else virtual
        redact = self._redactor()

        def files() -> Iterator[tuple[str, str]]:
            for info in listed:
                if glob and not file_filter_matches(glob, info.path, root):
                    continue
                try:
                    yield info.path, self.backend.read_text(info.path)
                except BinaryFile:
                    continue
                except FileTooLarge:
                    note_skipped_file(
                        info.path, f"{info.size / 1_000_000:.1f} MB, over the size limit"
                    )
                except BackendError:
                    note_skipped_file(info.path, "it could not be read")

        def mask(file_path: str, raw: str) -> str:
            return self._masked.get(file_path, raw, redact).text

        return masked_grep(pattern, files(), root, mask, regex=regex)


def kernel_folders_below(workspace: Path, folder: Path | None) -> tuple[str, ...]:
    """The `kernel_folders` of a `GuardedFolder` on `workspace` for a notebook folder `folder`:
    `folder` as a path from the workspace's top, if it is below it."""
    if folder is None:
        return ()
    try:
        below = Path(os.path.realpath(folder)).relative_to(os.path.realpath(workspace))
    except ValueError:
        return ()
    return (below.as_posix(),) if below.parts else ()
