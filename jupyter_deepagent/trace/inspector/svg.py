"""The inspector's charts as plain SVG: the context gauge, the breakdown bar and the step chart.

Colours are JupyterLab theme variables with light-theme fallbacks, so the charts follow a dark
theme in JupyterLab and still look right in a static HTML page.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from jupyter_deepagent.events import (
    AGED,
    CONTEXT_OVERFLOW,
    INPUT_OFFLOADED,
    OFFLOADED,
    SUMMARIZED,
)
from jupyter_deepagent.trace.inspector.figures import token_count

if TYPE_CHECKING:
    from jupyter_deepagent.trace.inspector.snapshot import Snapshot

__all__ = ["MARK_COLORS", "PART_COLORS", "breakdown_svg", "gauge_svg", "steps_svg"]

FILL = "var(--jp-brand-color1, #1a73e8)"
TRACK = "var(--jp-layout-color2, #e3e6ea)"
WARN = "var(--jp-warn-color1, #e37400)"
ERROR = "var(--jp-error-color1, #d93025)"
MUTED = "var(--jp-ui-font-color2, #5f6368)"
TEXT = "var(--jp-ui-font-color1, #202124)"
PART_COLORS = {
    "system prompt": "#7b61ff",
    "tool schemas": "#00a3a3",
    "messages": "#1a73e8",
    "messages + tool schemas": "#1a73e8",
    "tool results": "#f29900",
}
"""Breakdown colours: the same in both themes, chosen to read on light and dark backgrounds."""
MARK_COLORS = {
    OFFLOADED: "#f29900",
    AGED: "#9aa0a6",
    INPUT_OFFLOADED: "#00a3a3",
    SUMMARIZED: "#7b61ff",
    CONTEXT_OVERFLOW: "#d93025",
}


def _fill_color(share: float, trigger_share: float) -> str:
    if share >= 1:
        return ERROR
    return WARN if trigger_share and share >= trigger_share else FILL


def gauge_svg(context: Snapshot, width: int = 360, height: int = 14, *, mini: bool = False) -> str:
    """The last request against the window: a bar with marks at the summarization trigger and at
    the window's end. `mini` draws the summary line's small version, without labels."""
    window = context.get("window") or 0
    used = context.get("tokens") or 0
    trigger = context.get("trigger") or 0
    share = min(used / window, 1.0) if window else 0.0
    trigger_share = trigger / window if window else 0.0
    label = (
        f"{used:,} of {window:,} tokens ({share:.1%}); summarization at {trigger:,}"
        if window
        else "no request yet"
    )
    top = 0 if mini else 18
    bar = height
    total_height = bar if mini else bar + 36
    parts = [
        f'<svg class="jdi-gauge" role="img" width="{width}" height="{total_height}" '
        f'viewBox="0 0 {width} {total_height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(label)}</title>",
        f'<rect x="0" y="{top}" width="{width}" height="{bar}" rx="{bar / 2}" fill="{TRACK}"/>',
    ]
    if share > 0:
        filled = max(share * width, bar)  # a sliver still shows as a dot
        color = _fill_color(share, trigger_share)
        parts.append(
            f'<rect class="jdi-gauge-fill" x="0" y="{top}" width="{filled:.1f}" '
            f'height="{bar}" rx="{bar / 2}" fill="{color}"/>'
        )
    if trigger_share:
        x = trigger_share * width
        parts.append(
            f'<line class="jdi-mark-trigger" x1="{x:.1f}" x2="{x:.1f}" y1="{top - 2}" '
            f'y2="{top + bar + 2}" stroke="{TEXT}" stroke-width="2" '
            f'stroke-dasharray="3 2"/>'
        )
    if not mini:
        y = top + bar + 16
        if trigger_share:
            x = trigger_share * width
            anchor = "end" if trigger_share > 0.75 else "middle"
            parts.append(
                f'<text x="{x + (4 if anchor == "end" else 0):.1f}" y="{top - 5}" '
                f'font-size="11" fill="{MUTED}" text-anchor="{anchor}">'
                f"summarization at {token_count(trigger)}</text>"
            )
        if share > 0:
            parts.append(
                f'<text x="{min(max(share * width, 2), width - 2):.1f}" y="{y}" '
                f'font-size="11" font-weight="600" fill="{TEXT}" '
                f'text-anchor="{"start" if share < 0.5 else "end"}">'
                f"{token_count(used)} ({share:.1%})</text>"
            )
        parts.append(
            f'<text x="{width}" y="{y}" font-size="11" fill="{MUTED}" '
            f'text-anchor="end">window {token_count(window)}</text>'
        )
        parts.append(
            f'<line class="jdi-mark-window" x1="{width - 1}" x2="{width - 1}" '
            f'y1="{top - 2}" y2="{top + bar + 2}" stroke="{TEXT}" stroke-width="2"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def breakdown_svg(parts: dict[str, int], width: int = 360, height: int = 12) -> str:
    """What the last request was made of, as one stacked bar."""
    total = sum(parts.values())
    svg = [
        f'<svg class="jdi-breakdown" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<rect x="0" y="0" width="{width}" height="{height}" rx="3" fill="{TRACK}"/>',
    ]
    x = 0.0
    for name, count in parts.items():
        if not total or count <= 0:
            continue
        w = count / total * width
        svg.append(
            f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" '
            f'fill="{PART_COLORS.get(name, FILL)}"><title>{escape(name)}: {count:,} tokens'
            f"</title></rect>"
        )
        x += w
    svg.append("</svg>")
    return "".join(svg)


def steps_svg(context: Snapshot, width: int = 720, height: int = 150) -> str:
    """Tokens sent at each step of the main agent, with offload, aging and summarization marked.

    The scale follows the largest request; the trigger line is drawn when it is within reach
    (otherwise the axis says where it is), so a small run on a large window is still readable.
    """
    steps = context.get("steps") or []
    marks = context.get("marks") or []
    if not steps:
        return '<div class="jdi-muted">No model request yet.</div>'
    left, right, top, bottom = 44, 8, 12, 22
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(s["tokens"] for s in steps)
    trigger = context.get("trigger") or 0
    scale = max(peak * 1.15, 1)
    if trigger and trigger <= peak * 1.6:
        scale = max(scale, trigger * 1.08)
    first, last = steps[0]["step"], steps[-1]["step"]
    count = max(last - first + 1, 1)
    slot = plot_w / count
    bar_w = max(min(slot * 0.7, 28), 1.0)

    def x_of(step: int) -> float:
        return left + (step - first) * slot + slot / 2

    def y_of(value: float) -> float:
        return top + plot_h - value / scale * plot_h

    svg = [
        f'<svg class="jdi-steps" width="100%" viewBox="0 0 {width} {height}" '
        f'preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg" '
        f'style="max-width:{width}px">',
        f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" '
        f'stroke="{MUTED}" stroke-width="0.5"/>',
        f'<text x="{left - 6}" y="{top + 4}" font-size="10" fill="{MUTED}" '
        f'text-anchor="end">{token_count(scale)}</text>',
        f'<text x="{left - 6}" y="{top + plot_h}" font-size="10" fill="{MUTED}" '
        f'text-anchor="end">0</text>',
    ]
    for mark in marks:
        if first <= mark["step"] <= last:
            x = x_of(mark["step"])
            color = MARK_COLORS.get(mark["kind"], MUTED)
            svg.append(
                f'<line class="jdi-step-mark jdi-mark-{mark["kind"]}" x1="{x:.1f}" '
                f'x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" stroke="{color}" '
                f'stroke-width="1.5" stroke-dasharray="2 2"><title>step {mark["step"]}: '
                f"{escape(mark['label'])}</title></line>"
            )
            svg.append(
                f'<circle cx="{x:.1f}" cy="{top}" r="3.5" fill="{color}">'
                f"<title>step {mark['step']}: {escape(mark['label'])}</title></circle>"
            )
    for step in steps:
        y = y_of(step["tokens"])
        svg.append(
            f'<rect class="jdi-step-bar" x="{x_of(step["step"]) - bar_w / 2:.1f}" '
            f'y="{y:.1f}" width="{bar_w:.1f}" height="{top + plot_h - y:.1f}" rx="1" '
            f'fill="{FILL}" opacity="0.85"><title>step {step["step"]}: '
            f"{step['tokens']:,} tokens sent</title></rect>"
        )
    if trigger and trigger <= scale:
        y = y_of(trigger)
        svg.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{WARN}" stroke-dasharray="4 3"/><text x="{width - right}" '
            f'y="{y - 3:.1f}" font-size="10" fill="{WARN}" text-anchor="end">'
            f"summarize at {token_count(trigger)}</text>"
        )
    labelled = range(first, last + 1) if count <= 24 else {first, last}
    for step in labelled:
        svg.append(
            f'<text x="{x_of(step):.1f}" y="{height - 6}" font-size="10" '
            f'fill="{MUTED}" text-anchor="middle">{step}</text>'
        )
    svg.append("</svg>")
    return "".join(svg)
