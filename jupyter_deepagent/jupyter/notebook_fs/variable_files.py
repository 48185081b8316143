"""Kernel variables as files: tables as CSV, dicts and lists as JSON, everything else as text.

pandas and numpy are never imported here: a value is recognised as a frame or an array only when
the user's code has already imported them (`sys.modules`). A table is paged by rows, so reading
lines 5,000 to 5,100 of a ten-million-row frame renders a hundred rows, not the whole CSV.

CSV layout: one header line (more for MultiIndex columns), then exactly one line per row. A frame
with the default index (0, 1, 2... unnamed) is written without it (header `a,b`); any other
index is written as the first column(s) (header `,a,b` or `date,a,b`). A Series is a one-column
frame named after the Series (or `value`). Line breaks inside values are written escaped
(backslash, `n`), so line numbers and row numbers always agree.
"""

from __future__ import annotations

import inspect
import json
import keyword
import re
import sys
from collections.abc import Container, Iterable, Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    from numpy import ndarray
    from pandas import DataFrame, Series

__all__ = [
    "describe_variable",
    "is_table",
    "iter_table_lines",
    "render_variable",
    "renders_cheaply",
    "table_lines",
    "user_variables",
    "variable_extension",
    "variables_index",
]

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_LINE_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_SMALL_CELLS = 20_000  # tables up to this many cells are measured exactly by ls
_SMALL_ITEMS = 1_000  # containers up to this many items too
_COLUMNS_SHOWN = 12
_LARGE_TABLE_ROWS = 1_000


def _pandas_types() -> tuple[type, ...]:
    pandas = sys.modules.get("pandas")
    return (pandas.DataFrame, pandas.Series) if pandas is not None else ()


def _is_array(value: object) -> TypeGuard[ndarray]:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray)


def is_table(value: object) -> TypeGuard[DataFrame | Series]:
    """Tell whether `value` is a pandas DataFrame or Series (without importing pandas)."""
    types = _pandas_types()
    return bool(types) and isinstance(value, types)


def _is_frame(value: object) -> TypeGuard[DataFrame]:
    types = _pandas_types()
    return bool(types) and isinstance(value, types[0])


def _is_series(value: object) -> TypeGuard[Series]:
    types = _pandas_types()
    return bool(types) and isinstance(value, types[1])


def user_variables(
    namespace: Mapping[str, object], hidden: Container[str] = ()
) -> dict[str, object]:
    """The user's data in a kernel namespace, by name, sorted.

    Left out: names starting with `_`, names in `hidden` (IPython's `user_ns_hidden`), IPython's
    own `In`/`Out`/`exit`/`quit`/`get_ipython`, modules, classes and functions.

    Args:
        namespace: The shell's `user_ns`.
        hidden: Names the shell put there itself.

    Returns:
        `{name: value}` for each variable shown under `/vars/`.
    """
    found = {}
    for name, value in list(namespace.items()):
        if (
            not isinstance(name, str)
            or not name.isidentifier()
            or keyword.iskeyword(name)
            or name.startswith("_")
            or name in _IPYTHON_NAMES
            or name in hidden
            or isinstance(value, ModuleType | type)
            or inspect.isroutine(value)
        ):
            continue
        found[name] = value
    return dict(sorted(found.items()))


def variable_extension(value: object) -> str:
    """The file extension a variable is shown with: `csv`, `json` or `txt`."""
    if is_table(value):
        return "csv"
    if isinstance(value, dict | list):
        return "json"
    return "txt"


def describe_variable(value: object) -> str:
    """Type and shape in a few words, e.g. `DataFrame, shape (2, 1), columns: a`."""
    kind = type(value).__name__
    if _is_frame(value):
        names = [str(column) for column in value.columns[:_COLUMNS_SHOWN]]
        more = len(value.columns) - len(names)
        columns = ", ".join(names) + (f" (+{more} more)" if more > 0 else "")
        return f"{kind}, shape {value.shape}, columns: {columns or '(none)'}"
    if _is_series(value):
        named = f" {value.name!r}" if value.name is not None else ""
        return f"{kind}{named}, length {len(value)}, dtype {value.dtype}"
    if _is_array(value):
        return f"{kind}, shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, str | bytes | dict | list | tuple | set | frozenset):
        return f"{kind}, length {len(value)}"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        return f"{kind}, shape {shape}"
    return kind


def _as_frame(value: DataFrame | Series) -> DataFrame:
    if _is_series(value):
        return value.to_frame(name=value.name if value.name is not None else "value")
    return value


def _keeps_index(frame: DataFrame) -> bool:
    pandas = sys.modules["pandas"]
    index = frame.index
    default = (
        isinstance(index, pandas.RangeIndex)
        and index.start == 0
        and index.step == 1
        and index.name is None
    )
    return not default


def _escape_breaks(value: object) -> object:
    if isinstance(value, str):
        return _LINE_BREAKS.sub(lambda m: m.group().encode("unicode_escape").decode(), value)
    return value


def _csv_lines(frame: DataFrame, index: bool, header: bool) -> list[str]:
    return frame.to_csv(index=index, header=header, lineterminator="\n").splitlines()


def _row_lines(frame: DataFrame, start: int, stop: int, index: bool) -> list[str]:
    part = frame.iloc[start:stop]
    lines = _csv_lines(part, index, header=False)
    if len(lines) != len(part):  # a value holds a line break: write it as `\n`
        part = part.map(_escape_breaks)
        if index:
            part.index = part.index.map(_escape_breaks)
        lines = _csv_lines(part, index, header=False)
    return lines


def table_lines(value: DataFrame | Series, offset: int, limit: int) -> tuple[list[str], int]:
    """Render only lines `offset` to `offset + limit` of a table's CSV.

    Args:
        value: A DataFrame or Series.
        offset: First line (0 is the header).
        limit: Most lines to return.

    Returns:
        `(lines, total_lines)` of the whole CSV.
    """
    frame = _as_frame(value)
    index = _keeps_index(frame)
    header = _csv_lines(frame.iloc[:0], index, header=True)
    lines = header[offset : offset + limit]
    start, stop = max(offset - len(header), 0), offset + limit - len(header)
    if stop > start:
        lines += _row_lines(frame, start, stop, index)
    return lines, len(header) + len(frame)


def iter_table_lines(value: DataFrame | Series, rows: int = 5_000) -> Iterator[list[str]]:
    """Yield a table's CSV lines in chunks of about `rows` lines, header first."""
    frame = _as_frame(value)
    index = _keeps_index(frame)
    yield _csv_lines(frame.iloc[:0], index, header=True)
    for start in range(0, len(frame), rows):
        yield _row_lines(frame, start, start + rows, index)


def _json_text(value: object) -> str:
    try:
        return json.dumps(value, indent=2, default=str, ensure_ascii=False)
    except TypeError:  # keys JSON cannot hold (tuples, objects): write them as text
        return _json_text(_string_keys(value))
    except ValueError:  # a container that holds itself
        return json.dumps(_safe_repr(value), ensure_ascii=False)


def _string_keys(value: object) -> object:
    if isinstance(value, dict):
        return {str(key): _string_keys(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_string_keys(item) for item in value]
    return value


def _safe_repr(value: object) -> str:
    try:
        return repr(value)
    except Exception as exc:  # a broken __repr__ must not break the listing
        return f"<{type(value).__name__} object; repr() failed: {type(exc).__name__}: {exc}>"


def render_variable(name: str, value: object) -> tuple[str, str]:
    """Render a variable as the file the agent reads.

    Args:
        name: The variable's name (for messages only).
        value: Its value.

    Returns:
        `(extension, text)`: CSV for tables, JSON (indented, non-JSON values as `str`) for
        dicts and lists, the string itself for `str`, a shape line plus `repr` for numpy arrays,
        and `repr` for anything else.
    """
    del name  # the file is named after it; the content does not repeat it
    extension = variable_extension(value)
    if is_table(value):  # extension "csv"
        text = "\n".join(line for chunk in iter_table_lines(value) for line in chunk)
    elif extension == "json":
        text = _json_text(value)
    elif isinstance(value, str):
        text = value
    elif _is_array(value):
        text = f"{describe_variable(value)}\n{_safe_repr(value)}"
    else:
        text = _safe_repr(value)
    if text and not text.endswith("\n"):
        text += "\n"
    return extension, text


def renders_cheaply(value: object) -> bool:
    """Tell whether rendering `value` whole is cheap enough to do just to list its size.

    True for strings, scalars, tables up to 20,000 cells and containers up to 1,000 items.
    """
    if is_table(value):
        columns = len(value.columns) if hasattr(value, "columns") else 1
        return len(value) * columns <= _SMALL_CELLS
    if isinstance(value, dict | list | tuple | set | frozenset):
        return len(value) <= _SMALL_ITEMS
    return True


def variables_index(
    variables: Mapping[str, object], folder: str, secret: Iterable[str] = ()
) -> str:
    """The `index.md` of the variables: one line each with name, type and shape, and file.

    Args:
        variables: The variables, as `user_variables` returns them.
        folder: The folder path their files are shown under, e.g. `/notebook/vars/`.
        secret: Names of variables left out because they look like secrets (listed, no file).

    Returns:
        Markdown text.
    """
    lines = ["# Kernel variables", "", "name: type and shape -> file", ""]
    for name, value in variables.items():
        note = ""
        if is_table(value) and len(value) > _LARGE_TABLE_ROWS:
            note = " (large: read it in pages with offset and limit)"
        path = f"{folder}{name}.{variable_extension(value)}"
        lines.append(f"- {name}: {describe_variable(value)} -> {path}{note}")
    lines += [f"- {name}: (hidden: looks like a secret)" for name in sorted(secret)]
    if not variables and not secret:
        lines.append("(no variables yet: run a cell that assigns one)")
    return "\n".join(lines) + "\n"
