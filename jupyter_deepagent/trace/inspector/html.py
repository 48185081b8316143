"""The inspector's views, written once as HTML fragments rendered in Python from a snapshot.

Why Python-rendered HTML and not a TypeScript view module: the same fragment then serves every
place a run is looked at, with nothing to build or load. The cell widget puts them in
`ipywidgets.HTML` panes (and replaces only the live ones while the agent runs), the static
fallback of a saved notebook (nbconvert HTML, GitHub, VS Code without widget state) joins them
with CSS-only tabs inside a `<details>`, and the JupyterLab sidebar asks the kernel for them over
its comm. Charts are plain SVG (`svg`); colours are JupyterLab theme variables with
light-theme fallbacks, so a dark theme is followed where the page defines them.

Every function takes the snapshot of `trace.inspector` (or one of its parts) and returns text;
all text from the run is escaped. What leaves the kernel is cleaned as well (`static_html` here,
the widget's panes in `jupyter.views.inspector_widget`) by the views' allow-list
(`trace.safe_html.clean_view_html`), so a text a view forgot to escape still cannot run; the
stylesheet, the kernel's own constant, is added after cleaning.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from html import escape
from typing import TYPE_CHECKING

from jupyter_deepagent.trace.figures import (
    call_cost_text,
    cost_parts_text,
    cost_text,
    figures_text,
    token_count,
)
from jupyter_deepagent.trace.inspector.svg import (
    MARK_COLORS,
    PART_COLORS,
    breakdown_svg,
    gauge_svg,
    steps_svg,
)
from jupyter_deepagent.trace.inspector.tables import files_panel, skills_panel, subagents_panel
from jupyter_deepagent.trace.inspector.text import cache_note
from jupyter_deepagent.trace.inspector.theme import STYLE, badge
from jupyter_deepagent.trace.safe_html import clean_view_html

if TYPE_CHECKING:
    from jupyter_deepagent.events import RunEvent
    from jupyter_deepagent.trace.inspector.snapshot import Snapshot

__all__ = [
    "PANELS",
    "STYLE",
    "static_bundle",
    "static_html",
    "summary_html",
]


def summary_html(snap: Snapshot) -> str:
    """The one-line summary: status, model, model calls, tokens in and out, duration, a small
    gauge."""
    run, context = snap["run"], snap["context"]
    status = run.get("status")
    status_badge = badge(
        status or "running",
        {"ok": "ok", "error": "error", "stopped": "warn", "interrupted": "warn"}.get(
            status or "", "live"
        ),
    )
    window = context.get("window")
    used = f"{context['share']:.1%} of {token_count(window)}" if window else "no request yet"
    cached = cache_note(
        run.get("tokens_in"), run.get("tokens_in_cached"), run.get("tokens_in_cache_write")
    )
    items = [
        '<span class="jdi-title">Inspector</span>',
        status_badge,
        f'<span class="jdi-model">{escape(str(run.get("model") or "model ?"))}</span>',
        f"<span>{figures_text(run, cached=f' ({cached})' if cached else '')}</span>",
        *([badge(str(run["budget"]), "warn")] if run.get("budget") else []),
        f'<span class="jdi-mini">{gauge_svg(context, 90, 8, mini=True)} '
        f'<span class="jdi-muted">{used}</span></span>',
    ]
    return f'<span class="jdi-summary">{"".join(items)}</span>'


def _prompt_panel(snap: Snapshot) -> str:
    """The system prompt as ordered sections, each expandable to its text; changes marked."""
    prompt = snap["prompt"]
    sections = prompt["sections"]
    if not sections:
        return '<div class="jdi-muted">No system prompt sent yet.</div>'
    compared = prompt.get("compared_with")
    changed = [s for s in sections if s["change"]]
    note = ""
    if compared:
        note = (
            f" · {len(changed)} changed since the {escape(compared)}"
            if changed
            else f" · unchanged since the {escape(compared)}"
        )
    if prompt.get("removed"):
        note += " · removed: " + ", ".join(escape(n) for n in prompt["removed"])
    rows = [
        f'<div class="jdi-head">{len(sections)} sections · {prompt["tokens"]:,} tokens · '
        f"sent {prompt.get('calls', 0)} times in this run{note}</div>",
        '<div class="jdi-cols jdi-colhead jdi-prompt-cols"><span>#</span><span>section</span>'
        "<span>source</span><span class='jdi-num'>tokens</span><span>share</span>"
        "<span></span></div>",
    ]
    for index, section in enumerate(sections, 1):
        change = badge(section["change"], "warn") if section["change"] else ""
        bar = (
            f'<span class="jdi-share"><span style="width:{section["share"] * 100:.1f}%">'
            f'</span></span><span class="jdi-muted">{section["share"]:.0%}</span>'
        )
        rows.append(
            f'<details class="jdi-row jdi-section" data-section="{escape(section["name"])}">'
            f'<summary class="jdi-cols jdi-prompt-cols"><span class="jdi-muted">{index}</span>'
            f'<b>{escape(section["name"])}</b><span class="jdi-muted jdi-ellipsis">'
            f'{escape(section["source"])}</span><span class="jdi-num">{section["tokens"]:,}</span>'
            f'<span class="jdi-sharecell">{bar}</span><span>{change}</span></summary>'
            f'<pre class="jdi-pre">{escape(section["text"])}</pre></details>'
        )
    return "".join(rows)


def _context_panel(snap: Snapshot) -> str:
    """The gauge of the last request, its breakdown, and tokens sent per step with marks."""
    context = snap["context"]
    if not context.get("window"):
        return '<div class="jdi-muted">No model request yet.</div>' + _calls_list(snap)
    source = context.get("window_source")
    head = (
        f'<div class="jdi-head"><b>{context["tokens"]:,}</b> tokens in the last request '
        f"(step {context.get('step')}) · {context['share']:.1%} of the "
        f"{context['window']:,}-token window{f' (from {escape(str(source))})' if source else ''}"
        f" · summarization at {context['trigger']:,} · peak {context['peak']:,}</div>"
    )
    breakdown = context["breakdown"]
    parts = breakdown["parts"]
    legend = "".join(
        f'<span class="jdi-legend"><i style="background:{PART_COLORS.get(name, "#888")}"></i>'
        f"{escape(name)} {'≈' if breakdown['estimated'] else ''}{count:,}</span>"
        for name, count in parts.items()
    )
    marks = context.get("marks") or []
    kinds = sorted({m["kind"] for m in marks})
    mark_legend = "".join(
        f'<span class="jdi-legend"><i style="background:{MARK_COLORS.get(k, "#888")}"></i>'
        f"{escape(k.replace('_', ' '))}</span>"
        for k in kinds
    )
    mark_rows = "".join(
        f'<li><span class="jdi-muted">step {m["step"]}</span> {escape(m["label"])}</li>'
        for m in marks[-50:]
    )
    events = (
        (
            f'<details class="jdi-row"><summary>{len(marks)} compression event'
            f"{'s' if len(marks) != 1 else ''}</summary>"
            f'<ul class="jdi-list">{mark_rows}</ul></details>'
        )
        if marks
        else ""
    )
    return (
        f"{head}<div class='jdi-gaugebox'>{gauge_svg(context, 520, 16)}</div>"
        f'<div class="jdi-sub">What the last request held'
        f"{' (estimated from the events)' if breakdown['estimated'] else ''}</div>"
        f"{breakdown_svg(parts, 520)}<div class='jdi-legends'>{legend}</div>"
        f'<div class="jdi-sub">Tokens sent at each step</div>{steps_svg(context)}'
        f"<div class='jdi-legends'>{mark_legend}</div>{events}{_calls_list(snap)}"
    )


_CALLS_SHOWN = 100


def _calls_list(snap: Snapshot) -> str:
    """Every model call of the run (the last 100), with its tokens and, where the provider said,
    the share read from its prompt cache."""
    calls = snap.get("calls") or []
    if not calls:
        return ""
    run = snap["run"]
    cached = cache_note(
        run.get("tokens_in"), run.get("tokens_in_cached"), run.get("tokens_in_cache_write")
    )
    rows = []
    for call in calls[-_CALLS_SHOWN:]:
        note = cache_note(
            call["tokens_in"], call.get("tokens_in_cached"), call.get("tokens_in_cache_write")
        )
        who = escape(str(call.get("agent") or "main"))
        purpose = " (summary)" if call.get("purpose") == "summarize" else ""
        estimated = "≈" if call.get("tokens_in_estimated") else ""
        rows.append(
            f'<li><span class="jdi-muted">step {call.get("step")} · {who}{purpose}</span> '
            f"{estimated}{call['tokens_in']:,} tokens in · {call['tokens_out']:,} tokens out"
            f"{f' · {note}' if note else ''} · {escape(call_cost_text(call))}</li>"
        )
    more = f" (the last {_CALLS_SHOWN} shown)" if len(calls) > _CALLS_SHOWN else ""
    cost = cost_text(run.get("cost"), run.get("cost_unpriced_calls"))
    cost += f" ({cost_parts_text(run.get('cost_by_part'))})" if run.get("cost") else ""
    return (
        f'<details class="jdi-row jdi-calls"><summary>{len(calls)} model call'
        f"{'s' if len(calls) != 1 else ''}{f' · {cached}' if cached else ''} · "
        f"{escape(cost)}{more}</summary>"
        f'<ul class="jdi-list">{"".join(rows)}</ul></details>'
    )


PANELS = (
    ("Prompt", _prompt_panel),
    ("Skills", skills_panel),
    ("Files", files_panel),
    ("Context", _context_panel),
    ("Subagents", subagents_panel),
)
"""The tabs, in order: title and the function rendering its panel from a snapshot."""


def static_html(snap: Snapshot, *, open_: bool = False) -> str:
    """The whole inspector as one static HTML block: the summary line, which expands to the tabs
    (CSS only, no script), for saved notebooks, viewers without widgets and the sidebar; cleaned
    by the views' allow-list, then preceded by the inspector's stylesheet."""
    panels = [
        f'<div class="jdi-panel jdi-panel-{title.lower()}">'
        f"<h4 class='jdi-static-title'>{title}</h4>{render(snap)}</div>"
        for title, render in PANELS
    ]
    # The tabs' ids come from what they show, so a replayed run saves the very same HTML.
    uid = hashlib.sha256("".join(panels).encode("utf-8", "surrogatepass")).hexdigest()[:8]
    tabs = []
    for index, (title, _) in enumerate(PANELS):
        checked = " checked" if index == 0 else ""
        tabs.append(
            f'<input type="radio" name="jdi-{uid}" id="jdi-{uid}-{index}"{checked}>'
            f'<label for="jdi-{uid}-{index}">{title}</label>'
        )
    body = (
        f'<details class="jdi jdi-static"{" open" if open_ else ""}>'
        f"<summary>{summary_html(snap)}</summary>"
        f'<div class="jdi-tabs">{"".join(tabs)}{"".join(panels)}</div></details>'
    )
    return f"<style>{STYLE}</style>{clean_view_html(body)}"


def static_bundle(
    events: Iterable[RunEvent], previous_prompt: dict[str, object] | None = None
) -> dict[str, str]:
    """`text/html` and `text/plain` of a run's inspector, from its events (a saved notebook, a
    terminal, any viewer without widgets)."""
    from jupyter_deepagent.trace.inspector.snapshot import build_snapshot
    from jupyter_deepagent.trace.inspector.text import snapshot_text

    snap = build_snapshot(events, previous_prompt)
    return {"text/html": static_html(snap), "text/plain": snapshot_text(snap)}
