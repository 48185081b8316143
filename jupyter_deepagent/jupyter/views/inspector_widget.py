"""`Inspector`: the run inspector as an ipywidget, live under each `%%agent` cell.

Collapsed, it is one summary line (model, model calls, tokens, a small gauge, status); the toggle
opens five tabs (Prompt, Skills, Files, Context, Subagents). Each tab is an `ipywidgets.HTML` pane
showing a fragment of `trace.inspector.html`, the views shared with the static fallback and the
JupyterLab sidebar. While the agent runs, `on_event` feeds the snapshot and re-renders at most
`LIVE_INTERVAL` apart: the summary line and the Context tab (gauge, step chart) always, the other
tabs when they are open. Only panes whose HTML changed are sent to the browser, and every pane's
HTML is cleaned first (`trace.safe_html.clean_view_html`).

Where widgets cannot render (nbconvert HTML, GitHub, VS Code without widget state, a terminal),
the same display carries the static HTML and plain text of the same snapshot.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, cast

import ipywidgets as widgets

from jupyter_deepagent.trace.inspector import (
    PANELS,
    STYLE,
    InspectorBuilder,
    snapshot_text,
    static_html,
    summary_html,
    summary_text,
)
from jupyter_deepagent.trace.safe_html import clean_view_html

if TYPE_CHECKING:
    from jupyter_deepagent.events import RunEvent
    from jupyter_deepagent.trace.inspector import Snapshot
    from jupyter_deepagent.trace.run_trace import RunTrace

__all__ = ["LIVE_INTERVAL", "Inspector"]

LIVE_INTERVAL = 0.1
"""Seconds between two live renders (at most ten a second)."""

_CONTEXT_TAB = [title for title, _ in PANELS].index("Context")


class Inspector(widgets.VBox):
    """The inspector of one run.

    Args:
        events: Run events so far (a finished `RunTrace`'s `events`, or none for a live run).
        previous_prompt: The previous run's last prompt (`PromptAssembly.as_dict()`), so the
            Prompt tab marks what changed since then.
        expanded: Open the tabs at once instead of showing only the summary line.
    """

    def __init__(
        self,
        events: Iterable[RunEvent] = (),
        *,
        previous_prompt: dict[str, object] | None = None,
        expanded: bool = False,
    ) -> None:
        self._builder = InspectorBuilder(previous_prompt).extend(events)
        self._lock = threading.RLock()
        self._last_render = 0.0
        self._raw: dict[int, str] = {}  # pane -> the HTML it shows, before cleaning
        self._summary = widgets.HTML(layout=widgets.Layout(flex="1 1 auto"))
        self._toggle = widgets.ToggleButton(
            value=expanded,
            icon="chevron-down" if expanded else "chevron-right",
            tooltip="Show or hide the prompt, skills, files, context and subagents",
            layout=widgets.Layout(width="32px", height="24px", padding="0"),
        )
        self._panes = [widgets.HTML() for _ in PANELS]
        self._tabs = widgets.Tab(
            children=self._panes,
            titles=[title for title, _ in PANELS],
            layout=widgets.Layout(display="" if expanded else "none"),
        )
        header = widgets.HBox(
            [self._toggle, self._summary], layout=widgets.Layout(align_items="center")
        )
        header.add_class("jdi")
        style = widgets.HTML(f"<style>{STYLE}</style>", layout=widgets.Layout(display="none"))
        super().__init__(
            [style, header, self._tabs],
            layout=widgets.Layout(
                border="1px solid var(--jp-border-color2, #dadce0)",
                padding="2px 6px",
                margin="4px 0",
            ),
        )
        self.add_class("jdi-inspector")
        self._tabs.add_class("jdi")
        self._toggle.observe(self._toggled, "value")
        self._tabs.observe(lambda _: self.render(), "selected_index")
        self.render()

    @classmethod
    def from_trace(
        cls,
        trace: RunTrace | Iterable[RunEvent],
        *,
        previous_prompt: dict[str, object] | None = None,
        expanded: bool = False,
    ) -> Inspector:
        """The inspector of a finished (or stopped) `RunTrace`, or of any list of run events."""
        events = cast("Iterable[RunEvent]", getattr(trace, "events", trace))
        return cls(events, previous_prompt=previous_prompt, expanded=expanded)

    # -- live ---------------------------------------------------------------------------------------
    def on_event(self, event: RunEvent) -> None:
        """Take one run event; re-render if the last render is `LIVE_INTERVAL` old."""
        with self._lock:
            self._builder.add(event)
            now = time.perf_counter()
            if now - self._last_render >= LIVE_INTERVAL:
                self._render(live=True)

    def render(self) -> None:
        """Render every pane from the events so far (at the end of a run, or when opened)."""
        with self._lock:
            self._render(live=False)

    def _render(self, *, live: bool) -> None:
        self._last_render = time.perf_counter()
        if live and not self._toggle.value:  # collapsed: only the summary line shows
            self._set(self._summary, summary_html(self._builder.summary()))
            return
        snap = self._builder.snapshot()
        self._set(self._summary, summary_html(snap))
        if live:  # only the visible tab, and the gauge and step chart
            shown = {self._tabs.selected_index or 0, _CONTEXT_TAB}
        else:
            shown = set(range(len(PANELS)))
        for index in shown:
            self._set(self._panes[index], f'<div class="jdi">{PANELS[index][1](snap)}</div>')

    def _set(self, pane: widgets.HTML, html: str) -> None:
        """Show a view's HTML in a pane (the browser sets it as the pane's inner HTML), cleaned by
        the views' allow-list; cleaned and sent only when it changed."""
        if self._raw.get(id(pane)) == html:
            return
        self._raw[id(pane)] = html
        value = clean_view_html(html)
        if pane.value != value:
            pane.value = value

    def _toggled(self, change: Mapping[str, object]) -> None:
        opened = bool(change["new"])
        self._toggle.icon = "chevron-down" if opened else "chevron-right"
        self._tabs.layout.display = "" if opened else "none"
        if opened:
            self.render()

    # -- data and fallbacks -------------------------------------------------------------------------
    @property
    def snapshot(self) -> Snapshot:
        """The snapshot shown (see `jupyter_deepagent.trace.inspector.snapshot`)."""
        with self._lock:
            return self._builder.snapshot()

    def _repr_mimebundle_(self, **kwargs: object) -> dict[str, object]:
        """The widget, plus static HTML and plain text for viewers without widgets."""
        data = super()._repr_mimebundle_(**kwargs)
        snap = self.snapshot
        data["text/html"] = static_html(snap)
        data["text/plain"] = snapshot_text(snap)
        return data

    def __repr__(self) -> str:
        return f"<Inspector: {summary_text(self.snapshot)}>"
