"""The live notebook as a read-only folder: its cells as the user sees them, kernel variables.

```
/index.md              one line per cell run in this kernel, in notebook order: name, id, files
/cells/<name>.py       the latest source of the cell at that position (raw: magics as typed)
/outputs/<name>.txt    its latest outputs as text, labelled [stdout], [result], [error]...
/history/executions.md which cell each execution count `In [n]` was
/vars/index.md         one line per kernel variable: name, type and shape, file
/vars/<name>.csv|json|txt
/saved/index.md        (when the notebook file is known) the cells saved in the .ipynb
/saved/cells/<i>.py|md|txt, /saved/outputs/<i>.txt    by position i, 1-based
```

One entry per cell, its latest run: a re-run replaces (see `notebook_cells` for how executions
become cells, their order and names). A view made while a cell runs the agent ends at that cell
and leaves out its outputs; its `/saved/` also ends above that cell. A search (grep, glob) of the
whole view leaves `/saved/` out: the saved file holds earlier runs' outputs, which a re-run
replaced; search it by its path.

Everything is rendered from the shell and its `OutputCapture`, so a cell's output is readable
the moment the cell finishes, without saving. Tables page by rows.

Secrets never show: every text passes through a `Redactor` (API keys of the environment, values
the session adds, secret-named variables, credential shapes become `***`), and the environment
itself and secret-named text variables are left out of `/vars/`. Every read and grep works on
the masked text. Each text is masked once, block by block as pages and searches need it, and
kept (a `PagedText` in the capture's `PagedTextStore`, big ones in a spill file) until its
content or the set of secrets changes: so a 50 MB output costs its masking once, a page read
reads only its lines, and a grep over a big notebook masks only the blocks that hold the pattern.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from jupyter_deepagent._exceptions import BackendError, FileNotFound, InvalidPath, PermissionDenied
from jupyter_deepagent.backends import (
    current_match_limit,
    file_filter_matches,
    first_matches,
    folder_prefix,
    glob_matches,
    matching_lines,
    normalize_virtual_path,
)
from jupyter_deepagent.backends.protocol import (
    DEFAULT_READ_LIMIT,
    AsyncBackendMixin,
    EditResult,
    FileInfo,
    GrepMatch,
    ReadResult,
    WriteResult,
)
from jupyter_deepagent.jupyter.notebook_fs._saved_notebook import (
    SavedCell,
    SavedNotebook,
    saved_files,
)
from jupyter_deepagent.jupyter.notebook_fs.cell_files import (
    CellFiles,
    cell_files,
    missing_cell_reason,
)
from jupyter_deepagent.jupyter.notebook_fs.notebook_files import (
    FileMasking,
    NotebookFile,
    grep_file,
    redacted_table,
)
from jupyter_deepagent.jupyter.notebook_fs.output_capture import OutputCapture
from jupyter_deepagent.jupyter.notebook_fs.paged_store import PagedTextStore
from jupyter_deepagent.jupyter.notebook_fs.variable_files import (
    is_table,
    iter_table_lines,
    render_variable,
    renders_cheaply,
    table_lines,
    user_variables,
    variable_extension,
    variables_index,
)
from jupyter_deepagent.project.secrets.redaction import (
    MIN_SECRET_LENGTH,
    Redactor,
    is_secret_variable,
    names_secrets,
)

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["NotebookBackend"]

_LIVE_FOLDERS = ("/", "/cells", "/outputs", "/history", "/vars")
_SAVED_FOLDERS = ("/saved", "/saved/cells", "/saved/outputs")


class NotebookBackend(AsyncBackendMixin):
    """A read-only `BackendProtocol` over the live notebook (mounted at `/notebook/`).

    Args:
        shell: The IPython shell (`get_ipython()`).
        capture: Where outputs come from; by default the shell's `OutputCapture.install(shell)`.
        notebook_path: The `.ipynb` file, for `/saved/`; by default the kernel's `__session__`
            when it names a notebook (JupyterLab sets it), else `/saved/` is absent.
        mount: Where the view is mounted, used in hints and in `index.md` paths.
        secrets: Returns more values to mask as `***`, besides the environment's keys and the
            secret-named variables (the session adds what `.env` set and `--context` values).

    Made while a cell runs (the agent's run), the view ends at that cell: the cells below it
    and its own outputs are left out for as long as the backend lives.
    """

    def __init__(
        self,
        shell: InteractiveShell,
        capture: OutputCapture | None = None,
        notebook_path: str | os.PathLike[str] | None = None,
        *,
        mount: str = "/notebook/",
        secrets: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        self.shell = shell
        self.secrets = secrets
        self.redact = Redactor(extra=self._secret_values)
        self.capture = capture if capture is not None else OutputCapture.install(shell)
        self.notebook_path = notebook_path
        self.mount = folder_prefix(normalize_virtual_path(mount))
        self._saved: SavedNotebook | None = None
        self._rendered: OrderedDict[tuple[str, int, int], str] = OrderedDict()
        self._rendered_lock = threading.Lock()  # tools may run in parallel threads
        self._texts: PagedTextStore = getattr(self.capture, "texts", None) or PagedTextStore()
        self._running = self.capture.running_count()

    def __repr__(self) -> str:
        return f"NotebookBackend(mount={self.mount!r}, notebook_path={self._notebook_file()!r})"

    # -- the tree ------------------------------------------------------------------------------

    def _shown(self, path: str) -> str:
        return self.mount + path.lstrip("/")

    def _notebook_file(self) -> str | None:
        if self.notebook_path is not None:
            return os.fspath(self.notebook_path)
        session = getattr(self.shell, "user_ns", {}).get("__session__")
        return session if isinstance(session, str) and session.endswith(".ipynb") else None

    def _saved_notebook(self) -> SavedNotebook | None:
        path = self._notebook_file()
        if path is None:
            return None
        if self._saved is None or os.fspath(self._saved.path) != path:
            self._saved = SavedNotebook(path)
        return self._saved

    def _folders(self) -> tuple[str, ...]:
        return _LIVE_FOLDERS + (_SAVED_FOLDERS if self._saved_notebook() is not None else ())

    def _files(self, folder: str) -> dict[str, NotebookFile]:
        """Every file under `folder`; only the groups that can lie under it are built."""
        group = folder.strip("/").split("/", 1)[0]
        files: dict[str, NotebookFile] = {}
        if group in ("", "cells", "outputs", "history"):
            files.update(self._cell_files().files)
        if group in ("", "vars"):
            files.update(self._variable_files())
        if group == "saved":  # only when asked for: a search of the whole view leaves it out
            files.update(self._saved_files())
        prefix = folder_prefix(folder)
        redact = self.redact.frozen()  # the secrets are gathered once for all these files
        masking = FileMasking(self._texts, redact, redact.fingerprint())
        shown = {}
        for path, file in files.items():
            if path.startswith(prefix):
                if file.pages is not None:
                    file = redacted_table(file, redact)
                else:
                    file.masking = masking
                shown[path] = file
        return shown

    def _saved_cells(self) -> list[SavedCell]:
        """The saved cells, for the live cells' order and names (`[]` if unknown or broken)."""
        saved = self._saved_notebook()
        if saved is None:
            return []
        try:
            return saved.cells()
        except BackendError:  # a broken .ipynb must not hide the live view
            return []

    def _cell_files(self) -> CellFiles:
        return cell_files(self.capture, self._saved_cells(), self._running, self.mount.rstrip("/"))

    def _all_variables(self) -> dict[str, object]:
        hidden = getattr(self.shell, "user_ns_hidden", ())
        return user_variables(getattr(self.shell, "user_ns", {}), hidden)

    def _variables(self) -> dict[str, object]:
        variables = self._all_variables()
        return {n: v for n, v in variables.items() if not is_secret_variable(n, v)}

    def _secret_values(self) -> list[str]:
        values = list(self.secrets()) if self.secrets is not None else []
        for name, value in self._all_variables().items():
            if isinstance(value, str | bytes):
                if is_secret_variable(name, value):
                    values.extend(_texts_within(value, [_MOST_SECRET_VALUES]))
            elif isinstance(value, Mapping | list | tuple) and names_secrets(name):
                values.extend(_texts_within(value, [_MOST_SECRET_VALUES]))
        return values

    def _render(self, name: str, value: object) -> str:
        """A variable's text, kept until the next cell runs (paging does not re-render it)."""
        key = (name, id(value), getattr(self.shell, "execution_count", 0))
        with self._rendered_lock:
            text = self._rendered.get(key)
        if text is None:
            text = render_variable(name, value)[1]
            with self._rendered_lock:
                self._rendered[key] = text
                while len(self._rendered) > 4:
                    self._rendered.popitem(last=False)
        return text

    def _variable_files(self) -> dict[str, NotebookFile]:
        every = self._all_variables()
        variables = {n: v for n, v in every.items() if not is_secret_variable(n, v)}
        secret = [name for name in every if name not in variables]
        folder = self._shown("/vars/")
        index = NotebookFile("/vars/index.md", lambda: variables_index(variables, folder, secret))
        files = {index.path: index}
        for name, value in variables.items():
            path = f"/vars/{name}.{variable_extension(value)}"
            files[path] = NotebookFile(
                path,
                partial(self._render, name, value),
                size=partial(self._size, name, value),
                pages=partial(table_lines, value) if is_table(value) else None,
                chunks=partial(iter_table_lines, value) if is_table(value) else None,
            )
        return files

    def _size(self, name: str, value: object) -> int | None:
        if not renders_cheaply(value):
            return None
        return len(self._render(name, value).encode("utf-8", "surrogatepass"))

    def _saved_files(self) -> dict[str, NotebookFile]:
        """The saved file's cells; while an agent cell runs, only those above it (the saved
        file changes with every save, and below the running cell it holds the last pass)."""
        saved = self._saved_notebook()
        if saved is None:
            return {}
        above = None
        if self._running is not None:
            running = self._cell_files().view.running
            above = running.saved_index if running is not None else None
        return saved_files(saved, self.mount.rstrip("/"), above=above)

    # -- lookups -------------------------------------------------------------------------------

    def _missing(self, path: str) -> FileNotFound:
        parts = path.strip("/").split("/")
        stem = parts[-1].partition(".")[0]
        listing = f"ls {self._shown(folder_prefix(path.rsplit('/', 1)[0] or '/'))}"
        if parts[0] in ("cells", "outputs") and len(parts) == 2:
            why = missing_cell_reason(path, self._cell_files(), self.mount.rstrip("/"))
        elif parts[0] == "vars" and len(parts) == 2:
            value = self._variables().get(stem, self)
            if stem in self._all_variables() and value is self:
                why = f"{stem} looks like a secret (a key, token or password), so it is hidden"
            elif value is not self:
                right = self._shown(f"/vars/{stem}.{variable_extension(value)}")
                why = f"{stem} is a {type(value).__name__}: read {right}"
            else:
                why = (
                    f"no kernel variable named {stem!r}; {self._shown('/vars/index.md')} lists them"
                )
        elif parts[0] == "saved" and self._saved_notebook() is None:
            why = "the notebook file is not known in this kernel, so there are no saved cells"
        else:
            why = f"{listing} shows what is there"
        return FileNotFound(f"{self._shown(path)} does not exist: {why}.", path=path)

    def _file(self, path: str) -> NotebookFile:
        if path in self._folders():
            msg = f"{self._shown(path)} is a folder, not a file; use ls to list it."
            raise InvalidPath(msg, path=path)
        files = self._files(path.rsplit("/", 1)[0] or "/")
        found = files.get(path)
        if found is None and path.startswith(("/cells/", "/outputs/")):
            alias = self._cell_files().alias(path)  # `4.py` for `04.py`
            found = files.get(alias) if alias is not None else None
        if found is None:
            raise self._missing(path)
        return found

    def _scope(self, path: str) -> tuple[str, dict[str, NotebookFile]]:
        path = normalize_virtual_path(path)
        if path in self._folders():
            return path, self._files(path)
        return path.rsplit("/", 1)[0] or "/", {path: self._file(path)}

    # -- the protocol --------------------------------------------------------------------------

    def ls(self, path: str = "/") -> list[FileInfo]:
        """List a folder of the view (or a file itself), sorted by path."""
        path = normalize_virtual_path(path)
        if path not in self._folders():
            return [self._file(path).info()]
        base = folder_prefix(path)
        entries = {
            folder_prefix(folder): FileInfo(path=folder_prefix(folder), is_dir=True)
            for folder in self._folders()
            if folder != "/" and folder.rsplit("/", 1)[0] + "/" == base
        }
        for file_path, file in self._files(path).items():
            if "/" not in file_path[len(base) :]:  # at the top: the folders and index.md
                entries[file_path] = file.info()
        return sorted(entries.values(), key=lambda entry: entry.path)

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read `limit` lines from 0-based line `offset`; tables render only those rows."""
        path = normalize_virtual_path(path)
        file = self._file(path)
        if offset < 0 or limit < 1:
            return ReadResult.from_text(path, "", offset, limit)  # raises the usual error
        if file.masking is not None:
            view = file.view()
            lines, total = view.page(offset, limit), view.total_lines
        elif file.pages is not None:
            lines, total = file.pages(offset, limit)
        else:
            return ReadResult.from_text(path, file.text(), offset, limit)
        if offset >= total > 0:
            msg = (
                f"offset {offset} is past the end of {path}, which has {total} lines. "
                f"Use an offset below {total}."
            )
            raise BackendError(msg, path=path)
        return ReadResult(path=path, lines=lines, offset=offset, total_lines=total)

    def _refuse(self, path: str) -> PermissionDenied:
        path = normalize_virtual_path(path)
        msg = (
            f"Cannot change {self._shown(path)}: {self.mount} is a read-only view of the live "
            "notebook; write to /workspace/ or /outputs/ instead."
        )
        return PermissionDenied(msg, path=path)

    def write(self, path: str, content: str) -> WriteResult:
        """Refused: the notebook view is read-only."""
        raise self._refuse(path)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Refused: the notebook view is read-only."""
        raise self._refuse(path)

    def delete(self, path: str) -> None:
        """Refused: the notebook view is read-only."""
        raise self._refuse(path)

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files under `path` whose path relative to it matches `pattern` (`**`, `{a,b}`)."""
        root, files = self._scope(path)
        found = [f.info() for p, f in files.items() if glob_matches(pattern, p, root)]
        return sorted(found, key=lambda info: info.path)

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Lines containing `pattern` in the files under `path`, by path then line; masked
        texts are searched block by block, tables in chunks of rows.

        Raises:
            BackendError: If `regex` and the pattern is invalid or over its time budget.
        """
        root, files = self._scope(path)
        search = matching_lines(pattern, regex)  # one time budget for every file
        literal = pattern if not regex and "*" not in pattern else None
        cap = current_match_limit()
        matches: list[GrepMatch] = []
        for file_path in sorted(files):  # files in order, lines in order: no sort at the end
            if glob and not file_filter_matches(glob, file_path, root):
                continue
            matches += grep_file(files[file_path], search, pattern, regex, literal)
            if cap is not None and len(matches) > cap.limit:
                break  # the later files' lines come after these
        return first_matches(matches)


_MOST_SECRET_VALUES = 1_000
"""Values looked at in one secret-named variable, at every depth together: a dict of keys holds
a few, not thousands."""
_LONGEST_SECRET = 16_384
"""Characters: a key or a private key block is shorter (longer texts are data, not masked)."""


def _texts_within(value: object, budget: list[int], depth: int = 0) -> list[str]:
    """The texts a secret-named variable holds, to mask wherever they show: itself (a `str`, or
    `bytes` decoded), or the texts of a mapping's values or a list's items, three levels down at
    most (`api_keys = {"openai": "sk-..."}`); texts too short to mask or too long to be a key
    left out. `budget` is how many more values may be looked at, across the whole walk."""
    budget[0] -= 1
    if isinstance(value, bytes):
        value = value[:_LONGEST_SECRET].decode("utf-8", "replace")
    if isinstance(value, str):
        return [value] if MIN_SECRET_LENGTH <= len(value) <= _LONGEST_SECRET else []
    if depth >= 3 or budget[0] <= 0:
        return []
    try:  # a user's own mapping may compute its values, or fail to
        if isinstance(value, Mapping):
            items = list(itertools.islice(value.values(), budget[0]))
        elif isinstance(value, list | tuple):
            items = list(value[: budget[0]])
        else:
            return []
    except Exception:  # a value that cannot be read is one the model cannot see either
        return []
    found: list[str] = []
    for item in items:
        if budget[0] <= 0:
            break
        found.extend(_texts_within(item, budget, depth + 1))
    return found
