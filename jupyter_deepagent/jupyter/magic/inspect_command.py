"""`%agent inspect [--thread NAME] [--run N]`: the inspector of an earlier run of this kernel, and
`_agent` shown as the inspector.

The session keeps the traces of the kernel's last runs per thread (`RunHistory`), so an earlier
run can be inspected again, with what changed in its prompt since the run before it marked.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from jupyter_deepagent.jupyter.views.render import is_terminal, show

if TYPE_CHECKING:
    from jupyter_deepagent.jupyter.session.session import Session
    from jupyter_deepagent.trace.run_trace import RunTrace

__all__ = ["inspect_run", "trace_bundle"]

_INSPECT_USAGE = "usage: %agent inspect [--thread NAME] [--run N]   (N: 1 = first run, -1 = last)"


def inspect_run(session: Session, shell: object, rest: str) -> None:
    """`%agent inspect ...` (`rest`: its options): the inspector of an earlier run of this
    kernel, opened; in a terminal, its text.

    Raises:
        ValueError: A malformed option, or no such run in this kernel.
    """
    thread, run = _parse_inspect(rest)
    runs = session.runs
    name = thread or runs.last_thread or session.thread
    trace = runs.history.get(name, run)
    previous = runs.history.previous_prompt(name, before=trace)
    if is_terminal(shell):
        from jupyter_deepagent.trace.inspector import build_snapshot, snapshot_text

        print(snapshot_text(build_snapshot(trace.events, previous)))
        return
    from jupyter_deepagent.jupyter.views.inspector_widget import Inspector

    show(Inspector.from_trace(trace, previous_prompt=previous, expanded=True))


def _parse_inspect(rest: str) -> tuple[str | None, int]:
    """The thread (None: the current one) and run number of `%agent inspect ...`.

    Raises:
        ValueError: An unknown option or a run number that is not an integer.
    """
    words = shlex.split(rest)
    thread, run = None, -1
    while words:
        word = words.pop(0)
        if word in ("-t", "--thread") and words:
            thread = words.pop(0)
        elif word in ("-r", "--run") and words:
            value = words.pop(0)
            try:
                run = int(value)
            except ValueError:
                msg = f"%agent inspect: --run takes a number, not {value!r}\n{_INSPECT_USAGE}"
                raise ValueError(msg) from None
        else:
            msg = f"%agent inspect: unexpected {word!r}\n{_INSPECT_USAGE}"
            raise ValueError(msg)
    return thread, run


def trace_bundle(trace: RunTrace, *, terminal: bool = False, **kwargs: Any) -> Any:
    """What the notebook shows for a `RunTrace` (`_agent`): the inspector widget with its static
    fallback; in a terminal, the trace's own text."""
    if terminal:
        return trace._repr_mimebundle_()
    from jupyter_deepagent.jupyter.views.inspector_widget import Inspector

    return Inspector.from_trace(trace, **kwargs)._repr_mimebundle_()
