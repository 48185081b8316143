"""`%agent inspect [--thread NAME] [--run N]`: the inspector of an earlier run of this kernel, and
`_agent` shown as the inspector.

The kernel keeps the traces of its last runs per thread (`RunHistory`), so an earlier run can be
inspected again, with what changed in its prompt since the run before it marked.
"""

from __future__ import annotations

import shlex
from collections import OrderedDict
from typing import Any

__all__ = ["INSPECT_USAGE", "RunHistory", "parse_inspect", "trace_bundle"]

INSPECT_USAGE = "usage: %agent inspect [--thread NAME] [--run N]   (N: 1 = first run, -1 = last)"
_KEPT = 50  # runs kept per thread


class RunHistory:
    """The traces of this kernel's runs, by thread, oldest first (at most 50 per thread)."""

    def __init__(self) -> None:
        self._runs: OrderedDict[str, list[Any]] = OrderedDict()

    def add(self, thread: str, trace: Any) -> None:
        """Remember a run's trace (a stopped run's partial trace too); the same one once."""
        if trace is None:
            return
        runs = self._runs.setdefault(thread, [])
        if not runs or runs[-1] is not trace:
            runs.append(trace)
            del runs[:-_KEPT]

    def counts(self) -> dict[str, int]:
        """Thread -> how many of its runs are kept, threads in first-run order."""
        return {thread: len(runs) for thread, runs in self._runs.items()}

    def previous_prompt(self, thread: str, before: Any = None) -> dict[str, Any] | None:
        """The last prompt (`PromptAssembly.as_dict()`) of the run on `thread` before `before`
        (before any new run when `before` is None), for marking what changed since."""
        runs = self._runs.get(thread, [])
        if before is not None and any(run is before for run in runs):
            runs = runs[: next(i for i, run in enumerate(runs) if run is before)]
        for trace in reversed(runs):
            prompts = trace.prompts
            if prompts:
                return prompts[-1].as_dict()
        return None

    def get(self, thread: str, run: int) -> Any:
        """Run `run` of `thread` (1-based; negative counts from the last).

        Raises:
            ValueError: No such run in this kernel; the message says which runs there are.
        """
        runs = self._runs.get(thread, [])
        if not runs:
            known = ", ".join(self._runs) or "none yet"
            msg = (
                f"no run of thread {thread!r} in this kernel (threads with runs: {known}); "
                "runs from before a kernel restart are not kept"
            )
            raise ValueError(msg)
        index = run - 1 if run > 0 else len(runs) + run
        if run == 0 or not 0 <= index < len(runs):
            msg = f"thread {thread!r} has runs 1 to {len(runs)} in this kernel; --run {run} is none"
            raise ValueError(msg)
        return runs[index]


def parse_inspect(rest: str) -> tuple[str | None, int]:
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
                msg = f"%agent inspect: --run takes a number, not {value!r}\n{INSPECT_USAGE}"
                raise ValueError(msg) from None
        else:
            msg = f"%agent inspect: unexpected {word!r}\n{INSPECT_USAGE}"
            raise ValueError(msg)
    return thread, run


def trace_bundle(trace: Any, *, terminal: bool = False, **kwargs: Any) -> Any:
    """What the notebook shows for a `RunTrace` (`_agent`): the inspector widget with its static
    fallback; in a terminal, the trace's own text."""
    if terminal:
        return trace._repr_mimebundle_()
    from jupyter_deepagent.jupyter.views.inspector_widget import Inspector

    return Inspector.from_trace(trace, **kwargs)._repr_mimebundle_()
