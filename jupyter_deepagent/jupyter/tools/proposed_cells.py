"""The `propose_cell` tool (`%%agent --cells`): the agent proposes code and Markdown cells.

A proposal is text the model wrote, handed to the user: the tool runs nothing, it emits a
`cell_proposed` event, and the cell's view shows the proposals below the agent cell (see
`jupyter.views.proposed_cells`), where the JupyterLab extension inserts them as cells, never run.

Each proposal's `index` comes from the conversation, not from a counter: the `propose_cell` calls
of the turn (since its user message) in the order the model made them, so parallel calls in one
reply, a resumed run and a replay of the research log all number them alike. A turn may propose
at most `MAX_PROPOSALS` cells; a call beyond, an empty source, or a call from a subagent is refused
with a message the model can act on.
"""

# no `from __future__ import annotations`: LangChain reads `propose_cell`'s hints at run time,
# and `ToolRuntime` is imported where the tool is made, so LangChain loads only then
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

__all__ = ["MAX_PROPOSALS", "PROPOSE_CELL_TOOL_NAME", "inert_markdown", "propose_cell_tool"]

PROPOSE_CELL_TOOL_NAME: Final = "propose_cell"
MAX_PROPOSALS: Final = 10
"""At most this many cells proposed in one turn of an `%%agent` cell."""
CELL_KEY_METADATA: Final = "agent_cell"
"""The run's config metadata key naming its `%%agent` cell (`session.turns.CELL_METADATA_KEY`,
which this room cannot import; a test checks they agree)."""
_KINDS: Final = ("code", "markdown")
_IMAGE = re.compile(r"(\\*)!(?=\[)")
"""The `!` that makes `[...](...)` or `[...][ref]` an image, after the backslashes before it (an
odd number escape it already)."""
_AUTOLINK = (
    r"[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^<>\s]*>"
    r"|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]+@[A-Za-z0-9\-.]+>"
)
_TAG = re.compile(rf"<(?!{_AUTOLINK})(?=[A-Za-z!/?])")
"""A `<` that opens raw HTML (a tag, a comment, a declaration), not an autolink."""
_DIAGRAM_FENCE = re.compile(
    r"(?:^|(?<=\r))((?:[ \t]*+(?:>|[-*+]|\d{1,9}+[.)]))*+[ \t]*+(?:`{3,}+|~{3,}+)"
    r"(?:[^\S\r\n]|\ufeff)*+)(?=\{?mermaid\b)",
    re.IGNORECASE | re.MULTILINE,
)
"""The opening of a fenced block JupyterLab draws as a Mermaid diagram (```` ```mermaid ````, a
MyST `{mermaid}` directive), in a list or a quote too, after a line break of any kind: up to the
language word (JupyterLab's parser trims any white space before it). Possessive, so a line of
many spaces or markers costs one pass."""

_DESCRIPTION = f"""\
Propose a notebook cell to the user: a code cell (Python for this notebook's kernel) or a \
Markdown cell (notes, an explanation of the analysis). It is shown to the user below their \
agent cell, as a cell they can read, edit and run themselves; it is NEVER run by this tool or by \
you, so do not expect its output. Propose the analysis as the user should keep it: small, \
self-contained cells in the order they should run, using the notebook's variables. At most \
{MAX_PROPOSALS} cells per request; call it once per cell."""


def _call_args(call: Mapping[str, object]) -> Mapping[str, object]:
    args = call.get("args")
    return args if isinstance(args, Mapping) else {}


def _acceptable(args: Mapping[str, object]) -> bool:
    """Whether a call's arguments make a proposal (what `propose_cell` accepts, the limit aside)."""
    source = args.get("source")
    return args.get("kind") in _KINDS and isinstance(source, str) and bool(source.strip())


def inert_markdown(source: str) -> str:
    """`source` as a Markdown cell that loads nothing by itself: JupyterLab renders a Markdown cell
    as soon as it is inserted and whenever the notebook is opened, and its sanitizer lets an image
    at another server's address through, which would send that server whatever the model put in
    the address. So every image becomes a link (`![a](u)` -> `\\![a](u)`: the `!` stays, as
    text), raw HTML shows as text (`<img ...>` -> `&lt;img ...>`), and a Mermaid diagram, whose
    nodes can load images too (`A@{ img: "https://..." }`), shows as its source (```` ```mermaid
    ```` -> ```` ```text mermaid ````: rename the fence back to draw it); autolinks stay links."""

    def as_text(found: re.Match[str]) -> str:
        slashes = found.group(1)
        return found.group(0) if len(slashes) % 2 else f"{slashes}\\!"

    undrawn = _DIAGRAM_FENCE.sub(r"\1text ", source)
    return _TAG.sub("&lt;", _IMAGE.sub(as_text, undrawn))


def proposal_index(messages: Sequence[object], tool_call_id: str | None) -> int:
    """How many acceptable `propose_cell` calls the turn made before the call `tool_call_id`.

    The turn is what follows its last user message; the calls are counted in the order of the
    model's replies and of the calls in each reply.
    """
    start = 0
    for position, message in enumerate(messages):
        if getattr(message, "type", None) == "human":
            start = position
    count = 0
    for message in messages[start:]:
        for call in getattr(message, "tool_calls", None) or []:
            if call.get("id") == tool_call_id:
                return count
            if call.get("name") == PROPOSE_CELL_TOOL_NAME and _acceptable(_call_args(call)):
                count += 1
    return count


def propose_cell_tool() -> "StructuredTool":
    """The `propose_cell` tool of one run (see the module docstring)."""
    from langchain.tools import ToolRuntime
    from langchain_core.tools import StructuredTool, ToolException

    from jupyter_deepagent.events.cells import CELL_PROPOSED
    from jupyter_deepagent.harness.run_events.event_stream import (
        current_agent,
        emit_event,
        run_step,
    )

    def propose_cell(kind: Literal["code", "markdown"], source: str, runtime: ToolRuntime) -> str:
        """Propose a notebook cell to the user (shown below the agent cell, never run).

        Args:
            kind: "code" for a Python code cell, "markdown" for a Markdown cell.
            source: The cell's whole text.
        """
        if current_agent()[0] != "main":
            msg = (
                "only the main agent proposes cells: put the code in your report instead, and "
                "the agent that called you can propose it"
            )
            raise ToolException(msg)
        if kind not in _KINDS:
            msg = f'kind must be "code" or "markdown", not {kind!r}'
            raise ToolException(msg)
        if not source.strip():
            msg = "source is empty: give the cell's whole text"
            raise ToolException(msg)
        messages = list((runtime.state or {}).get("messages", []) or [])
        index = proposal_index(messages, runtime.tool_call_id)
        if index >= MAX_PROPOSALS:
            msg = (
                f"at most {MAX_PROPOSALS} cells per request, and {MAX_PROPOSALS} are proposed "
                "already: this one was not. Finish with your answer."
            )
            raise ToolException(msg)
        metadata = (runtime.config or {}).get("metadata") or {}
        cell = metadata.get(CELL_KEY_METADATA)
        emit_event(
            CELL_PROPOSED,
            step=run_step(messages),
            kind=kind,
            source=inert_markdown(source) if kind == "markdown" else source,
            cell=cell if isinstance(cell, str) else None,
            index=index,
            tool_call_id=runtime.tool_call_id,
        )
        what = "code cell" if kind == "code" else "Markdown cell"
        return (
            f"Proposed {what} {index + 1} (of at most {MAX_PROPOSALS}): the user sees it below "
            "their agent cell; it has not run."
        )

    return StructuredTool.from_function(
        propose_cell,
        name=PROPOSE_CELL_TOOL_NAME,
        description=_DESCRIPTION,
        handle_tool_error=True,
    )
