"""The live notebook as a read-only folder: cell sources, their outputs, kernel variables.

```
/cells/<n>.py          source of the cell with execution count n (raw: magics as typed)
/outputs/<n>.txt       its outputs as text, labelled [stdout], [result], [error]...
/vars/index.md         one line per kernel variable: name, type and shape, file
/vars/<name>.csv|json|txt
/saved/index.md        (when the notebook file is known) the cells saved in the .ipynb
/saved/cells/<i>.py|md|txt, /saved/outputs/<i>.txt    by position i, 1-based
```

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

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import repeat
from operator import add
from typing import Any

from jupyter_deepagent._exceptions import BackendError, FileNotFound, InvalidPath, PermissionDenied
from jupyter_deepagent.backends import (
    BlockSearch,
    file_filter_matches,
    folder_prefix,
    glob_matches,
    grep_texts,
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
from jupyter_deepagent.jupyter._output_text import output_pieces, outputs_key
from jupyter_deepagent.jupyter._saved_notebook import SavedNotebook, saved_index
from jupyter_deepagent.jupyter.output_capture import OutputCapture
from jupyter_deepagent.jupyter.paged_store import PagedTextStore, PiecesOf
from jupyter_deepagent.jupyter.paged_text import PagedText
from jupyter_deepagent.jupyter.redaction import MIN_SECRET_LENGTH, Redactor, is_secret_variable
from jupyter_deepagent.jupyter.variable_files import (
    is_table,
    iter_table_lines,
    render_variable,
    renders_cheaply,
    table_lines,
    user_variables,
    variable_extension,
    variables_index,
)

__all__ = ["NotebookBackend"]

_LIVE_FOLDERS = ("/", "/cells", "/outputs", "/vars")
_SAVED_FOLDERS = ("/saved", "/saved/cells", "/saved/outputs")


@dataclass(frozen=True, slots=True)
class _Masking:
    """How the files of one call are masked: the kept texts, the masking, its fingerprint."""

    store: PagedTextStore
    redact: Redactor
    secrets: int


@dataclass(slots=True)
class _File:
    """A file of the view, rendered only when read (`pages` reads a table without rendering it).

    `text` is the real text; a file with `masking` (every one but the tables, which are masked
    page by page) is read and searched through its `view()`. `pieces` and `key` give a big text
    without joining it, and say when it changed without hashing it anew (outputs).
    """

    path: str
    text: Callable[[], str]
    size: Callable[[], int | None] | None = None
    pages: Callable[[int, int], tuple[list[str], int]] | None = None
    chunks: Callable[[], Iterator[list[str]]] | None = None
    modified_at: datetime | None = None
    masking: _Masking | None = None
    pieces: PiecesOf | None = None
    key: Callable[[], Hashable] | None = None

    def view(self) -> PagedText:
        """The masked text, kept from an earlier call while its content is unchanged."""
        assert self.masking is not None  # only masked files have a view
        if self.pieces is not None and self.key is not None:
            pieces, key = self.pieces, self.key()
        else:
            text = self.text()
            pieces, key = (lambda: ([(text, 0, len(text))], 0)), (len(text), hash(text))
        masking = self.masking
        return masking.store.get(self.path, key, pieces, masking.redact, masking.secrets)

    def may_hold(self, literal: str) -> bool:
        """False when the raw text does not hold `literal` (so no masked line can)."""
        if self.pieces is None:
            return literal in self.text()
        return any(text.find(literal, a, b) != -1 for text, a, b in self.pieces()[0])

    def info(self) -> FileInfo:
        if self.size is not None:
            size = self.size()
        elif self.masking is not None:
            size = self.view().size
        else:
            size = len(self.text().encode("utf-8", "surrogatepass"))
        return FileInfo(path=self.path, size=size or 0, modified_at=self.modified_at)


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
    """

    def __init__(
        self,
        shell: Any,
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

    def _files(self, folder: str) -> dict[str, _File]:
        """Every file under `folder`; only the groups that can lie under it are built."""
        group = folder.strip("/").split("/", 1)[0]
        files: dict[str, _File] = {}
        if group in ("", "cells", "outputs"):
            for cell in self.capture.cells():
                n = cell.execution_count
                files[f"/cells/{n}.py"] = _File(f"/cells/{n}.py", lambda c=cell: c.source)
                if cell.outputs:
                    files[f"/outputs/{n}.txt"] = _File(
                        f"/outputs/{n}.txt",
                        cell.outputs_text,
                        pieces=lambda c=cell: output_pieces(c.outputs),
                        key=lambda c=cell: outputs_key(c.outputs),
                    )
        if group in ("", "vars"):
            files.update(self._variable_files())
        if group == "saved":
            files.update(self._saved_files())
        elif group == "":
            with contextlib.suppress(BackendError):  # a broken .ipynb must not hide the live view
                files.update(self._saved_files())
        prefix = folder_prefix(folder)
        redact = self.redact.frozen()  # the secrets are gathered once for all these files
        masking = _Masking(self._texts, redact, redact.fingerprint())
        shown = {}
        for path, file in files.items():
            if path.startswith(prefix):
                if file.pages is not None:
                    file = _redacted_table(file, redact)
                else:
                    file.masking = masking
                shown[path] = file
        return shown

    def _all_variables(self) -> dict[str, Any]:
        hidden = getattr(self.shell, "user_ns_hidden", ())
        return user_variables(getattr(self.shell, "user_ns", {}), hidden)

    def _variables(self) -> dict[str, Any]:
        variables = self._all_variables()
        return {n: v for n, v in variables.items() if not is_secret_variable(n, v)}

    def _secret_values(self) -> list[str]:
        values = list(self.secrets()) if self.secrets is not None else []
        for name, value in self._all_variables().items():
            if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH:
                if is_secret_variable(name, value):
                    values.append(value)
        return values

    def _render(self, name: str, value: Any) -> str:
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

    def _variable_files(self) -> dict[str, _File]:
        every = self._all_variables()
        variables = {n: v for n, v in every.items() if not is_secret_variable(n, v)}
        secret = [name for name in every if name not in variables]
        folder = self._shown("/vars/")
        index = _File("/vars/index.md", lambda: variables_index(variables, folder, secret))
        files = {index.path: index}
        for name, value in variables.items():
            path = f"/vars/{name}.{variable_extension(value)}"
            table = is_table(value)
            files[path] = _File(
                path,
                lambda n=name, v=value: self._render(n, v),
                size=lambda n=name, v=value: self._size(n, v),
                pages=(lambda offset, limit, v=value: table_lines(v, offset, limit))
                if table
                else None,
                chunks=(lambda v=value: iter_table_lines(v)) if table else None,
            )
        return files

    def _size(self, name: str, value: Any) -> int | None:
        if not renders_cheaply(value):
            return None
        return len(self._render(name, value).encode("utf-8", "surrogatepass"))

    def _saved_files(self) -> dict[str, _File]:
        saved = self._saved_notebook()
        if saved is None:
            return {}
        cells, when, name = saved.cells(), saved.modified_at, saved.path.name
        files: dict[str, _File] = {}
        for cell in cells:
            files[cell.source_path] = _File(
                cell.source_path, lambda c=cell: c.source, modified_at=when
            )
            if cell.outputs:
                files[cell.outputs_path] = _File(
                    cell.outputs_path,
                    lambda c=cell: c.outputs_text(name),
                    modified_at=when,
                    pieces=lambda c=cell: output_pieces(c.outputs, c.header(name)),
                    key=lambda c=cell: (c.header(name), outputs_key(c.outputs)),
                )
        index = lambda: saved_index(cells, name, self.mount.rstrip("/"))  # noqa: E731
        files["/saved/index.md"] = _File("/saved/index.md", index, modified_at=when)
        return files

    # -- lookups -------------------------------------------------------------------------------

    def _missing(self, path: str) -> FileNotFound:
        parts = path.strip("/").split("/")
        stem = parts[-1].partition(".")[0]
        listing = f"ls {self._shown(folder_prefix(path.rsplit('/', 1)[0] or '/'))}"
        if parts[0] == "cells" and len(parts) == 2:
            why = f"no cell with execution count {stem}; {listing} lists executed cells"
        elif parts[0] == "outputs" and len(parts) == 2:
            if stem.isdigit() and self.capture.cell(int(stem)) is not None:
                source = self._shown(f"/cells/{stem}.py")
                why = f"cell {stem} ran but produced no output; its source is {source}"
            else:
                why = f"no output for execution count {stem}; {listing} lists cells with output"
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

    def _file(self, path: str) -> _File:
        if path in self._folders():
            msg = f"{self._shown(path)} is a folder, not a file; use ls to list it."
            raise InvalidPath(msg, path=path)
        found = self._files(path.rsplit("/", 1)[0] or "/").get(path)
        if found is None:
            raise self._missing(path)
        return found

    def _scope(self, path: str) -> tuple[str, dict[str, _File]]:
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
        if path != "/":  # no files at the top, only folders
            for file_path, file in self._files(path).items():
                if "/" not in file_path[len(base) :]:
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
        matches: list[GrepMatch] = []
        for file_path in sorted(files):  # files in order, lines in order: no sort at the end
            file = files[file_path]
            if glob and not file_filter_matches(glob, file_path, root):
                continue
            if file.masking is not None:
                if literal is not None and not file.may_hold(literal):
                    continue  # no line of it can match once masked either
                for numbers, lines in file.view().grep(search, literal):
                    matches += map(GrepMatch, repeat(file_path), numbers, lines)
            elif file.chunks is None:
                matches += grep_texts(pattern, [(file_path, file.text())], root, regex=regex)
            else:
                matches += _grep_chunks(search, file_path, file.chunks())
        return matches


def _grep_chunks(search: BlockSearch, path: str, chunks: Iterator[list[str]]) -> list[GrepMatch]:
    matches: list[GrepMatch] = []
    first = 1
    for chunk in chunks:
        found, lines = search("\n".join(chunk))
        matches += map(GrepMatch, repeat(path), map(add, found, repeat(first)), lines)
        first += len(chunk)
    return matches


def _redacted_table(file: _File, redact: Redactor) -> _File:
    pages, chunks = file.pages, file.chunks
    assert pages is not None  # only tables page
    return replace(
        file,
        text=lambda: redact(file.text()),
        pages=lambda offset, limit: _redact_page(redact, pages(offset, limit)),
        chunks=(lambda: (redact.lines(chunk) for chunk in chunks()))
        if chunks is not None
        else None,
    )


def _redact_page(redact: Redactor, page: tuple[list[str], int]) -> tuple[list[str], int]:
    lines, total = page
    return redact.lines(lines), total
