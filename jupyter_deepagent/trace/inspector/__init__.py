"""The context inspector: a snapshot of a run built from its events, and its static HTML views.

The entry points: `build_snapshot` (or `InspectorBuilder`, event by event, for a live run) makes
the JSON snapshot; `static_html`/`summary_html` and `snapshot_text`/`summary_text` show it;
`static_bundle` gives a run's `text/html` and `text/plain` from its events; `PANELS` are the
tabs a live view renders one by one, `STYLE` their stylesheet; `figures_text`, `duration` and
`token_count` say a run's numbers as every view (the cell, the command line) says them.
"""

from jupyter_deepagent.trace.figures import duration, figures_text, token_count
from jupyter_deepagent.trace.inspector.html import (
    PANELS,
    STYLE,
    static_bundle,
    static_html,
    summary_html,
)
from jupyter_deepagent.trace.inspector.snapshot import (
    SNAPSHOT_VERSION,
    InspectorBuilder,
    RunSummary,
    Snapshot,
    build_snapshot,
)
from jupyter_deepagent.trace.inspector.text import snapshot_text, summary_text, trace_line

__all__ = [
    "PANELS",
    "SNAPSHOT_VERSION",
    "STYLE",
    "InspectorBuilder",
    "RunSummary",
    "Snapshot",
    "build_snapshot",
    "duration",
    "figures_text",
    "snapshot_text",
    "static_bundle",
    "static_html",
    "summary_html",
    "summary_text",
    "token_count",
    "trace_line",
]
