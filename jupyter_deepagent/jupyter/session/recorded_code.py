"""Code from a research log is code the user approves, in this kernel.

A research log is shared (in git, by a colleague), and its hash chain has no key: anyone can
rewrite a recorded `python` call and hash the chain again. So a code-running call that a replay
serves from the log runs only once the user approved that exact code in this kernel:

- The model call that proposes it pauses like an approval and shows the code, also when
  `python_approval` is off (`recorded_code_pause`), and the tool itself refuses code from the
  log that nobody approved here (`gated_tools`: this also covers subagents).
- What approves it (`RecordedCode.check_resume`): the Approve (or Edit) button under the cell
  that shows it; or code with the same text approved in this kernel before (Run All again);
  or `%agent resume approve CODE_ID`, naming that exact code by the id its refusal showed. A
  plain `%agent resume approve` (the notebook's own resume cell, run by Run All, papermill or
  nbclient) is refused with the code shown, and Run All stops there: no frontend can answer
  for code it never showed, and no cell written before can name code a log was rewritten to.
  Headless, the runner's `--approve-recorded` approves it, and each block is printed as it runs.
- A recorded approval (the log's `%agent resume approve`) counts for nothing here.

"Code-running" is the `python` tool, and any tool marked `runs_code` (see `runs_code`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from jupyter_deepagent._exceptions import RecordedCodeNotApproved
from jupyter_deepagent.jupyter.views.code_display import shown_code

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage
    from langchain_core.tools import BaseTool

    from jupyter_deepagent.jupyter.session.thread_state import CodeCall, PendingCall

__all__ = [
    "CODE_RUNNING_TOOLS",
    "FROM_LOG_DESCRIPTION",
    "HEADLESS_METADATA_KEY",
    "HEADLESS_TOKEN_KEY",
    "PRINTED_HEADER",
    "RUNNER_TOKEN_ENV",
    "RecordedCode",
    "gated_tools",
    "headless_metadata",
    "headless_policy",
    "recorded_code_id",
    "refusal_text",
    "runs_code",
]

CODE_RUNNING_TOOLS: Final = frozenset({"python"})
"""Tools that run code by their name alone."""
HEADLESS_METADATA_KEY: Final = "jupyter_deepagent_recorded_code"
"""Execute-request metadata the headless runner sends: "approve" (`--approve-recorded`) or
"refuse", honoured only with the runner's token (`HEADLESS_TOKEN_KEY`)."""
HEADLESS_TOKEN_KEY: Final = "jupyter_deepagent_runner_token"
"""Execute-request metadata: the token the headless runner started its kernel with. JupyterLab
copies a cell's metadata into the requests that run it, so a notebook's cell could carry
`HEADLESS_METADATA_KEY` itself; it cannot carry a token made for one kernel."""
RUNNER_TOKEN_ENV: Final = "JUPYTER_DEEPAGENT_RUNNER_TOKEN"
"""The environment variable holding the runner's token in the kernel it starts (taken out of the
environment when this module loads, so the kernel's code and subprocesses do not inherit it)."""
_RUNNER_TOKEN: Final = os.environ.pop(RUNNER_TOKEN_ENV, "")


def headless_metadata(policy: str, token: str) -> dict[str, str]:
    """The execute-request metadata by which the headless runner, holding `token`, says what to
    do with code from the research log (`policy`: "approve" or "refuse")."""
    return {HEADLESS_METADATA_KEY: policy, HEADLESS_TOKEN_KEY: token}


def headless_policy(metadata: Mapping[str, object]) -> str | None:
    """What an execute request's metadata says about code from the research log: "approve" or
    "refuse" when the headless runner that started this kernel sent it (its token matches),
    else None, as from any frontend (the user approves each block)."""
    policy = metadata.get(HEADLESS_METADATA_KEY)
    token = metadata.get(HEADLESS_TOKEN_KEY)
    if policy not in ("approve", "refuse") or not _RUNNER_TOKEN or not isinstance(token, str):
        return None
    return str(policy) if hmac.compare_digest(token.encode(), _RUNNER_TOKEN.encode()) else None


PRINTED_HEADER: Final = "code from the research log, run because of --approve-recorded"
"""The first line of each code block printed under `--approve-recorded` (the runner finds it)."""

FROM_LOG_DESCRIPTION: Final = (
    "This code comes from the research log, not from a model answering in this kernel. "
    "Approve it only if you have read it: it runs in your kernel."
)
"""The description of a pause for code from the log (see `recorded_code_pause`)."""


def runs_code(tool: object) -> bool:
    """Tell whether a tool (or a tool's name) runs code: `python`, or a tool marked as running
    code (`metadata[RUNS_CODE]`, as `@agent_tool(runs_code=True)` marks a notebook tool)."""
    if isinstance(tool, str):
        return tool in CODE_RUNNING_TOOLS
    from jupyter_deepagent.harness.approval_policy import runs_code as marked_as_running_code

    return getattr(tool, "name", None) in CODE_RUNNING_TOOLS or marked_as_running_code(tool)


def _code_text(name: str, args: Mapping[str, object]) -> str:
    """The code a call runs: the python tool's `code`, else its arguments as JSON."""
    code = args.get("code") if name in CODE_RUNNING_TOOLS else None
    if isinstance(code, str):
        return code
    return json.dumps(dict(args), sort_keys=True, ensure_ascii=False, default=str)


def _key(name: str, args: Mapping[str, object]) -> str:
    text = f"{name}\0{_code_text(name, args)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class RecordedCode:
    """The kernel's account of code-running calls served from research logs, and of the code
    the user approved here (one per `Session`; nothing of it is saved).

    Attributes:
        headless: "approve" or "refuse" while the headless runner runs the cell (see
            `HEADLESS_METADATA_KEY`), else None.
    """

    def __init__(self) -> None:
        self.headless: str | None = None
        self._names: set[str] = set(CODE_RUNNING_TOOLS)
        self._served: set[str] = set()
        self._served_by_tool: dict[str, set[str]] = {}
        self._approved: set[str] = set()
        self._lock = threading.Lock()

    def code_running(self, tools: Iterable[BaseTool]) -> list[str]:
        """Remember which of a run's tools run code; returns their names."""
        names = sorted({str(tool.name) for tool in tools if runs_code(tool)})
        with self._lock:
            self._names.update(names)
        return names

    def note_served(self, message: BaseMessage) -> None:
        """Remember the code-running calls of a model response the research log served."""
        with self._lock:
            for call in getattr(message, "tool_calls", None) or []:
                if call.get("name") in self._names:
                    key = _key(call["name"], call.get("args") or {})
                    self._served.add(key)
                    self._served_by_tool.setdefault(call["name"], set()).add(key)

    def note_thread(self, messages: Sequence[BaseMessage]) -> None:
        """Remember the calls of a thread's last model reply if the log served it (marked by
        the replay), so a pause saved before a kernel restart is still known as the log's."""
        from jupyter_deepagent.trace.research_log.replay import SERVED_FROM_LOG

        last = next((m for m in reversed(messages) if getattr(m, "type", "") == "ai"), None)
        if last is not None and (getattr(last, "response_metadata", None) or {}).get(
            SERVED_FROM_LOG
        ):
            self.note_served(last)

    def _awaits(self, name: str, args: Mapping[str, object]) -> bool:
        """At the tool, for a tool other than `python`: whether a call of it that the log served
        is unapproved while this call's own code is not approved. The tool sees its arguments
        after validation (`"5"` may arrive as 5), so an exact match alone could miss them."""
        if name in CODE_RUNNING_TOOLS:
            return False
        key = _key(name, args)
        with self._lock:
            waiting = self._served_by_tool.get(name, set()) - self._approved
            return bool(waiting) and key not in self._approved

    def from_log(self, name: str, args: Mapping[str, object]) -> bool:
        """Tell whether this call's code was served by a research log and not approved here."""
        key = _key(name, args)
        with self._lock:
            return name in self._names and key in self._served and key not in self._approved

    def needs_approval(self, name: str, args: Mapping[str, object]) -> bool:
        """Tell whether the call must wait for the user (code from the log, unapproved, and no
        `--approve-recorded`)."""
        return self.headless != "approve" and self.from_log(name, args)

    def approve(self, name: str, args: Mapping[str, object]) -> None:
        """Record that the user approved this exact code in this kernel."""
        with self._lock:
            self._approved.add(_key(name, args))

    def waiting(self, pending: Sequence[PendingCall]) -> list[PendingCall]:
        """The pending calls that wait on code from the log nobody approved here."""
        return [r for r in pending if self.needs_approval(str(r.get("name")), r.get("args") or {})]

    def headless_refusal(self, pending: Sequence[PendingCall]) -> str | None:
        """Headless without `--approve-recorded`, for a run that paused only because of code
        from the log (`recorded_code_pause`: no resume cell will answer it): why it stops."""
        if self.headless != "refuse":
            return None
        waiting = [r for r in self.waiting(pending) if r.get("description") == FROM_LOG_DESCRIPTION]
        return refusal_text(waiting, headless=True) if waiting else None

    def check_resume(
        self,
        pending: Sequence[PendingCall],
        decision: str,
        *,
        via: str,
        code_id: str | None = None,
        edits: Mapping[str, object] | None = None,
    ) -> None:
        """Allow a decision on `pending` or refuse it (see the module's rules); an approval
        of code from the log is remembered, so the same code runs next time without asking.

        Raises:
            RecordedCodeNotApproved: Code from the research log waits, and this is neither the
                button, nor `%agent resume approve` with that code's id (`code_id`), nor
                `--approve-recorded`; the message shows the code and its id.
        """
        if decision not in ("approve", "edit"):
            return
        calls = [
            (
                str(r.get("name")),
                {**(r.get("args") or {}), **(edits or {})}
                if decision == "edit"
                else dict(r.get("args") or {}),
            )
            for r in pending
        ]
        waiting: list[CodeCall] = [
            {"name": name, "args": args} for name, args in calls if self.needs_approval(name, args)
        ]
        named = code_id is not None and code_id == recorded_code_id(waiting)
        if waiting and via != "button" and (self.headless == "refuse" or not named):
            raise RecordedCodeNotApproved(
                refusal_text(waiting, headless=self.headless == "refuse", wrong_id=code_id)
            )
        if self.headless == "approve":
            return  # not remembered: each block is printed as it runs (see `gate`)
        for name, args in calls:
            if name in self._names:
                self.approve(name, args)

    def gate(self, name: str, args: Mapping[str, object]) -> None:
        """At the tool itself: refuse code from the log nobody approved; print it when the
        headless runner's `--approve-recorded` approves it.

        Raises:
            PermissionError: The code comes from the research log and was not approved here.
        """
        if not (self.from_log(name, args) or self._awaits(name, args)):
            return
        if self.headless == "approve":
            shown, notes = shown_code(_code_text(name, args))  # no terminal escapes
            print(
                f"--- {PRINTED_HEADER} ({name}):\n{_with_notes(shown, notes)}\n---",
                file=sys.stderr,
                flush=True,
            )
            return
        msg = (
            f"not run: this {name} call's code comes from the research log and was not approved "
            "in this kernel (a recorded approval is not enough)."
        )
        raise PermissionError(msg)


def recorded_code_id(calls: Sequence[CodeCall]) -> str:
    """The id (16 hex digits) of the code of `calls`, which `%agent resume approve` takes."""
    keys = "\0".join(_key(str(c.get("name")), c.get("args") or {}) for c in calls)
    return hashlib.sha256(keys.encode()).hexdigest()[:16]


def refusal_text(
    waiting: Sequence[CodeCall], headless: bool = False, wrong_id: str | None = None
) -> str:
    """Why a resume does not run code from the log, with the code, and what to do."""
    blocks = "\n\n".join(
        f"--- {r.get('name')}:\n"
        f"{_with_notes(*shown_code(_code_text(str(r.get('name')), r.get('args') or {})))}\n---"
        for r in waiting
    )
    if headless:
        todo = (
            "Headless, run the notebook with `jupyter-deepagent run --approve-recorded` (or "
            "check it with `jupyter-deepagent verify --approve-recorded`) to run it (each code "
            "block is printed as it runs)."
        )
    else:
        todo = (
            f"Read it; to run it, click Approve under the agent cell that shows it, or run "
            f"`%agent resume approve {recorded_code_id(waiting)}` (this code's id; "
            "headless: `jupyter-deepagent run --approve-recorded`)."
        )
    if wrong_id and not headless:
        todo = f"The id {wrong_id} is not this code's. " + todo
    return (
        "nothing was run: the code waiting for approval comes from the research log, not from a "
        "model answering in this kernel, and a recorded approval (or a resume cell that Run All "
        f"executes) does not approve it.\n{blocks}\n{todo}"
    )


def _with_notes(code: str, notes: Sequence[str]) -> str:
    """Code as `shown_code` gives it, after its notes (what in it would mislead a reader)."""
    return "\n".join([*(f"(read closely: {note})" for note in notes), code])


def gated_tools(tools: Sequence[object], recorded: RecordedCode) -> list[object]:
    """`tools`, each code-running one refusing code from the log nobody approved here (see
    `RecordedCode.gate`). The tool's name, description and schema stay as they are. Only
    function tools (`StructuredTool`, as the python tool and notebook tools are) can be gated
    here; another kind relies on the pause (`recorded_code_pause`)."""
    from langchain_core.tools import StructuredTool

    gated = []
    for tool in tools:
        if not (runs_code(tool) and isinstance(tool, StructuredTool)):
            gated.append(tool)
            continue
        update: dict[str, object] = {}
        if tool.func is not None:
            update["func"] = _gated(tool.name, tool.func, recorded)
        if tool.coroutine is not None:
            update["coroutine"] = _agated(tool.name, tool.coroutine, recorded)
        gated.append(tool.model_copy(update=update))
    return gated


def _gated(name: str, func: Callable[..., object], recorded: RecordedCode) -> Callable[..., object]:
    from langchain_core.tools import ToolException

    def run(*args: object, **kwargs: object) -> object:
        try:
            recorded.gate(name, kwargs)
        except PermissionError as exc:
            raise ToolException(str(exc)) from None
        return func(*args, **kwargs)

    return run


def _agated(
    name: str, coroutine: Callable[..., Awaitable[object]], recorded: RecordedCode
) -> Callable[..., Awaitable[object]]:
    from langchain_core.tools import ToolException

    async def run(*args: object, **kwargs: object) -> object:
        try:
            recorded.gate(name, kwargs)
        except PermissionError as exc:
            raise ToolException(str(exc)) from None
        return await coroutine(*args, **kwargs)

    return run
