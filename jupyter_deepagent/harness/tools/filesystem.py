"""The file tools the agent calls (`ls`, `read_file`, `write_file`, `edit_file`, `delete`, `glob`,
`grep`), as LangChain tools over any backend.

Every call runs inside `bind_state_files(state["files"])`, so a `StateBackend` works on the
thread's files; when the call changed them, the tool returns a `Command` that updates the graph
state's `files` channel along with its message. `write_file`, `edit_file` and `delete` refuse the
harness's own folders (`write_guard`). Failures the model can fix (a missing file, an
ambiguous edit, a negative offset) come back as an error `ToolMessage`, never as an exception.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Generic, TypeAlias, TypeVar

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command
from pydantic import BaseModel

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends import check_glob
from jupyter_deepagent.backends.matching.match_limit import MatchLimit, limiting_matches
from jupyter_deepagent.backends.protocol import (
    BackendProtocol,
    EditResult,
    FileInfo,
    GrepMatch,
    ReadResult,
    WriteResult,
)
from jupyter_deepagent.backends.skipped_files import SkippedFile, recording_skipped_files
from jupyter_deepagent.backends.state import FileData, bind_state_files
from jupyter_deepagent.harness.tools import _filesystem_text as text
from jupyter_deepagent.harness.tools._filesystem_text import (
    FILESYSTEM_TOOL_NAMES,
    READ_LIMIT,
    TOOL_DESCRIPTIONS,
    filesystem_prompt,
)
from jupyter_deepagent.harness.tools._format import (
    GREP_MATCH_LIMIT,
    GrepOutputMode,
    format_edit,
    format_glob,
    format_grep,
    format_listing,
    format_read,
    format_write,
)
from jupyter_deepagent.harness.tools.write_guard import refuse_harness_folder

__all__ = [
    "FILESYSTEM_TOOL_NAMES",
    "READ_LIMIT",
    "TOOL_DESCRIPTIONS",
    "BackendFactory",
    "filesystem_prompt",
    "filesystem_tools",
]

BackendFactory: TypeAlias = Callable[[ToolRuntime], BackendProtocol]
"""Makes the backend for one tool call from its runtime (state, context, store, config)."""

ToolOutput: TypeAlias = str | ToolMessage | Command


_Result = TypeVar("_Result")


@dataclass(frozen=True)
class _Plan(Generic[_Result]):
    """What one tool call does: the backend call (sync and async twin) and how its result reads."""

    call: Callable[[BackendProtocol], _Result]
    acall: Callable[[BackendProtocol], Awaitable[_Result]]
    render: Callable[[_Result], str]


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _plan_ls(path: str = "/") -> _Plan[list[FileInfo]]:
    return _Plan(lambda b: b.ls(path), lambda b: b.als(path), lambda r: format_listing(r, path))


def _plan_read_file(file_path: str, offset: int = 0, limit: int = READ_LIMIT) -> _Plan[ReadResult]:
    _require(offset >= 0, f"offset must be 0 or more (got {offset}); the first line is offset 0.")
    _require(limit >= 1, f"limit must be 1 or more (got {limit}); the default is {READ_LIMIT}.")
    return _Plan(
        lambda b: b.read(file_path, offset, limit),
        lambda b: b.aread(file_path, offset, limit),
        lambda r: format_read(r, file_path, limit, READ_LIMIT),
    )


def _plan_write_file(file_path: str, content: str) -> _Plan[WriteResult]:
    refuse_harness_folder(file_path)
    return _Plan(
        lambda b: b.write(file_path, content),
        lambda b: b.awrite(file_path, content),
        lambda r: format_write(r, content),
    )


def _plan_edit_file(
    file_path: str, old_string: str, new_string: str, replace_all: bool = False
) -> _Plan[EditResult]:
    refuse_harness_folder(file_path)
    _require(old_string != "", "old_string is empty; give the exact text to replace.")
    _require(
        old_string != new_string,
        "old_string and new_string are identical, so the edit would change nothing.",
    )
    return _Plan(
        lambda b: b.edit(file_path, old_string, new_string, replace_all),
        lambda b: b.aedit(file_path, old_string, new_string, replace_all),
        format_edit,
    )


def _plan_delete(file_path: str) -> _Plan[None]:
    refuse_harness_folder(file_path)
    return _Plan(
        lambda b: b.delete(file_path),
        lambda b: b.adelete(file_path),
        lambda _: f"Deleted {file_path}.",
    )


def _plan_glob(pattern: str, path: str = "/") -> _Plan[list[FileInfo]]:
    _require(pattern != "", "pattern is empty; give a glob such as '*.md'.")
    check_glob(pattern)
    return _Plan(
        lambda b: b.glob(pattern, path),
        lambda b: b.aglob(pattern, path),
        lambda r: format_glob(r, pattern, path),
    )


def _plan_grep(
    pattern: str,
    path: str = "/",
    glob: str | None = None,
    regex: bool = False,
    output_mode: GrepOutputMode = "files_with_matches",
) -> _Plan[_GrepFound]:
    _require(pattern != "", "pattern is empty; give the text to search for.")
    if glob:
        check_glob(glob)

    def call(b: BackendProtocol) -> _GrepFound:
        with recording_skipped_files() as skipped, limiting_matches(GREP_MATCH_LIMIT) as cap:
            matches = b.grep(pattern, path, glob, regex)
        shown = [item for item in skipped if _visible(b, item.path)]
        return matches[:GREP_MATCH_LIMIT], shown, _stopped(cap, matches)

    async def acall(b: BackendProtocol) -> _GrepFound:
        with recording_skipped_files() as skipped, limiting_matches(GREP_MATCH_LIMIT) as cap:
            matches = await b.agrep(pattern, path, glob, regex)
        shown = [item for item in skipped if await _avisible(b, item.path)]
        return matches[:GREP_MATCH_LIMIT], shown, _stopped(cap, matches)

    return _Plan(
        call,
        acall,
        lambda r: format_grep(
            r[0], pattern, path, glob, output_mode, skipped=r[1], stopped_at=r[2]
        ),
    )


_GrepFound: TypeAlias = tuple[list[GrepMatch], list[SkippedFile], int | None]
"""A grep's matches (the first `GREP_MATCH_LIMIT`), skipped files, and the limit if it stopped."""


def _stopped(cap: MatchLimit, matches: list[GrepMatch]) -> int | None:
    """The limit, if the search left matches out (a backend that ignores the limit included)."""
    return cap.limit if cap.reached or len(matches) > cap.limit else None


def _visible(backend: BackendProtocol, path: str) -> bool:
    """Whether the agent may see `path` (a skipped file inside a hidden folder is not named)."""
    try:
        backend.ls(path)
    except BackendError:
        return False
    return True


async def _avisible(backend: BackendProtocol, path: str) -> bool:
    try:
        await backend.als(path)
    except BackendError:
        return False
    return True


_TOOLS: dict[str, tuple[Callable[..., _Plan], type[BaseModel]]] = {
    "ls": (_plan_ls, text.LsArgs),
    "read_file": (_plan_read_file, text.ReadFileArgs),
    "write_file": (_plan_write_file, text.WriteFileArgs),
    "edit_file": (_plan_edit_file, text.EditFileArgs),
    "delete": (_plan_delete, text.DeleteArgs),
    "glob": (_plan_glob, text.GlobArgs),
    "grep": (_plan_grep, text.GrepArgs),
}


def _state_files(runtime: ToolRuntime) -> Mapping[str, FileData] | None:
    state = runtime.state
    if isinstance(state, Mapping):
        return state.get("files")
    return getattr(state, "files", None)


def _respond(
    name: str,
    runtime: ToolRuntime,
    content: str,
    failed: bool,
    changes: Mapping[str, FileData | None],
) -> ToolOutput:
    """The tool's return value: plain text, an error message, or a Command updating `files`."""
    if not failed and not changes:
        return content
    message = ToolMessage(
        content=content,
        tool_call_id=runtime.tool_call_id or "",
        name=name,
        status="error" if failed else "success",
    )
    if not changes:
        return message
    return Command(update={"files": dict(changes), "messages": [message]})


class _FileTool:
    """One tool's sync and async drivers: resolve the backend, bind the state, run the plan."""

    def __init__(
        self,
        name: str,
        plan: Callable[..., _Plan],
        resolve: Callable[[ToolRuntime], BackendProtocol],
    ) -> None:
        self.name, self.plan, self.resolve = name, plan, resolve

    def run(self, runtime: ToolRuntime, kwargs: dict[str, object]) -> ToolOutput:
        with bind_state_files(_state_files(runtime)) as changes:
            try:
                plan = self.plan(**kwargs)
                content, failed = plan.render(plan.call(self.resolve(runtime))), False
            except (BackendError, ValueError) as exc:
                content, failed = f"Error: {exc}", True
        return _respond(self.name, runtime, content, failed, changes)

    async def arun(self, runtime: ToolRuntime, kwargs: dict[str, object]) -> ToolOutput:
        with bind_state_files(_state_files(runtime)) as changes:
            try:
                plan = self.plan(**kwargs)
                content, failed = plan.render(await plan.acall(self.resolve(runtime))), False
            except (BackendError, ValueError) as exc:
                content, failed = f"Error: {exc}", True
        return _respond(self.name, runtime, content, failed, changes)

    def as_tool(self, description: str, args_schema: type[BaseModel]) -> StructuredTool:
        def call(runtime: ToolRuntime, **kwargs: object) -> ToolOutput:
            return self.run(runtime, kwargs)

        async def acall(runtime: ToolRuntime, **kwargs: object) -> ToolOutput:
            return await self.arun(runtime, kwargs)

        return StructuredTool(
            name=self.name,
            description=description,
            args_schema=args_schema,
            func=call,
            coroutine=acall,
        )


def _resolver(
    backend: BackendProtocol | BackendFactory,
) -> Callable[[ToolRuntime], BackendProtocol]:
    if isinstance(backend, type):
        msg = (
            f"backend must be a backend instance or a factory `lambda runtime: ...`, not the "
            f"class {backend.__name__}; pass {backend.__name__}(...) instead."
        )
        raise TypeError(msg)
    if isinstance(backend, BackendProtocol):
        instance = backend
        return lambda _runtime: instance
    if not callable(backend):
        msg = f"backend must be a backend or a callable (runtime) -> backend, not {backend!r}"
        raise TypeError(msg)
    factory = backend

    def resolve(runtime: ToolRuntime) -> BackendProtocol:
        made = factory(runtime)
        if not isinstance(made, BackendProtocol):
            msg = f"the backend factory {factory!r} returned {made!r}, which is not a backend"
            raise TypeError(msg)
        return made

    return resolve


def _check_names(names: Collection[str], option: str) -> None:
    unknown = sorted(set(names) - set(FILESYSTEM_TOOL_NAMES))
    if unknown:
        msg = (
            f"{option} names unknown tool(s) {', '.join(unknown)}; "
            f"the filesystem tools are {', '.join(FILESYSTEM_TOOL_NAMES)}."
        )
        raise ValueError(msg)


def filesystem_tools(
    backend: BackendProtocol | BackendFactory,
    *,
    descriptions: Mapping[str, str] | None = None,
    exclude: Collection[str] = (),
) -> list[BaseTool]:
    """Build the file tools over one backend, in the order of `FILESYSTEM_TOOL_NAMES`.

    Args:
        backend: Where the files live: a backend, or a factory called with each call's
            `ToolRuntime` (to pick a backend from the runtime context or store, say).
        descriptions: Tool name -> description, replacing the default in `TOOL_DESCRIPTIONS`.
        exclude: Names of tools to leave out.

    Returns:
        LangChain tools with sync and async implementations; the runtime is injected by the
        agent's tool node and does not appear in the schema the model sees.

    Raises:
        TypeError: If `backend` is neither a backend nor a callable (a backend class, say).
        ValueError: If `descriptions` or `exclude` names a tool that does not exist.
    """
    descriptions = dict(descriptions or {})
    _check_names(descriptions, "descriptions")
    _check_names(exclude, "exclude")
    resolve = _resolver(backend)
    tools: list[BaseTool] = []
    for name, (plan, args_schema) in _TOOLS.items():
        if name in exclude:
            continue
        description = descriptions.get(name, TOOL_DESCRIPTIONS[name])
        tools.append(_FileTool(name, plan, resolve).as_tool(description, args_schema))
    return tools
