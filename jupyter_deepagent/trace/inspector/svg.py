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
from jupyter_deepagent.trace.figures import token_count

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


def _pct(value: float) -> str:
    """A share of the drawing's width as an SVG length (`42.5%`)."""
    return f"{value * 100:.2f}%"


def gauge_svg(context: Snapshot, width: int = 360, height: int = 14, *, mini: bool = False) -> str:
    """The last request against the window: a bar with marks at the summarization trigger and at
    the window's end. `mini` draws the summary line's small version, `width` px wide, without
    labels; the full one fills its box up to `width` px, its labels at 11 px whatever the box's
    width (positions are shares of the width, so nothing is scaled: a narrow sidebar shows the
    same text size as a wide cell)."""
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
    size = (
        f'width="{width}" height="{total_height}" viewBox="0 0 {width} {total_height}"'
        if mini
        else f'width="100%" height="{total_height}" style="max-width:{width}px"'
    )
    parts = [
        f'<svg class="jdi-gauge" role="img" {size} xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(label)}</title>",
        f'<rect x="0" y="{top}" width="100%" height="{bar}" rx="{bar / 2}" fill="{TRACK}"/>',
    ]
    if share > 0:
        # a sliver still shows as a dot
        filled = f"{max(share * width, bar):.1f}" if mini else _pct(max(share, 0.02))
        color = _fill_color(share, trigger_share)
        parts.append(
            f'<rect class="jdi-gauge-fill" x="0" y="{top}" width="{filled}" '
            f'height="{bar}" rx="{bar / 2}" fill="{color}"/>'
        )
    if trigger_share and mini:
        # a solid notch across the small bar (a dashed line there reads as a stray glyph)
        x = trigger_share * width
        parts.append(
            f'<rect class="jdi-mark-trigger" x="{x - 1:.1f}" y="0" width="2" height="{bar}" '
            f'fill="{TEXT}"/>'
        )
    elif trigger_share:
        parts.append(
            f'<line class="jdi-mark-trigger" x1="{_pct(trigger_share)}" '
            f'x2="{_pct(trigger_share)}" y1="{top - 2}" y2="{top + bar + 2}" stroke="{TEXT}" '
            f'stroke-width="2" stroke-dasharray="3 2"/>'
        )
    if not mini:
        y = top + bar + 16
        if trigger_share:
            anchor = "end" if trigger_share > 0.6 else "middle" if trigger_share > 0.3 else "start"
            parts.append(
                f'<text x="{_pct(trigger_share)}" y="{top - 5}" font-size="11" fill="{MUTED}" '
                f'text-anchor="{anchor}">summarization at {token_count(trigger)}</text>'
            )
        # one line under the bar, from its left end: it cannot run into another label
        parts.append(
            f'<text x="0" y="{y}" font-size="11" fill="{TEXT}">{token_count(used)} ({share:.1%}) '
            f"of the {token_count(window)} window</text>"
        )
        parts.append(
            f'<line class="jdi-mark-window" x1="100%" x2="100%" y1="{top - 2}" '
            f'y2="{top + bar + 2}" stroke="{TEXT}" stroke-width="3"/>'
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
    The chart fills its box up to `width` px; positions are shares of the width and labels are
    11 px at any width (nothing is scaled, so a narrow sidebar reads as well as a wide cell).
    """
    steps = context.get("steps") or []
    marks = context.get("marks") or []
    if not steps:
        return '<div class="jdi-muted">No model request yet.</div>'
    top, bottom = 18, 20
    plot_h = height - top - bottom
    peak = max(s["tokens"] for s in steps)
    trigger = context.get("trigger") or 0
    scale = max(peak * 1.15, 1)
    if trigger and trigger <= peak * 1.6:
        scale = max(scale, trigger * 1.08)
    first, last = steps[0]["step"], steps[-1]["step"]
    count = max(last - first + 1, 1)
    slot = 1 / count
    bar_w = max(min(slot * 0.7, 28 / width), 1 / width)  # at most 28 px in a full-width chart

    def x_of(step: int) -> float:
        return (step - first) * slot + slot / 2

    def y_of(value: float) -> float:
        return top + plot_h - value / scale * plot_h

    svg = [
        f'<svg class="jdi-steps" width="100%" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" style="max-width:{width}px">',
        f'<line x1="0" x2="100%" y1="{top + plot_h}" y2="{top + plot_h}" '
        f'stroke="{MUTED}" stroke-width="0.5"/>',
        f'<line x1="0" x2="100%" y1="{top}" y2="{top}" stroke="{MUTED}" stroke-width="0.5" '
        f'stroke-dasharray="1 3"/>',
        f'<text x="0" y="{top - 5}" font-size="11" fill="{MUTED}">{token_count(scale)} tokens</text>',
    ]
    for mark in marks:
        if first <= mark["step"] <= last:
            x = _pct(x_of(mark["step"]))
            color = MARK_COLORS.get(mark["kind"], MUTED)
            svg.append(
                f'<line class="jdi-step-mark jdi-mark-{mark["kind"]}" x1="{x}" '
                f'x2="{x}" y1="{top}" y2="{top + plot_h}" stroke="{color}" '
                f'stroke-width="1.5" stroke-dasharray="2 2"><title>step {mark["step"]}: '
                f"{escape(mark['label'])}</title></line>"
            )
            svg.append(
                f'<circle cx="{x}" cy="{top}" r="3.5" fill="{color}">'
                f"<title>step {mark['step']}: {escape(mark['label'])}</title></circle>"
            )
    for step in steps:
        y = y_of(step["tokens"])
        svg.append(
            f'<rect class="jdi-step-bar" x="{_pct(x_of(step["step"]) - bar_w / 2)}" '
            f'y="{y:.1f}" width="{_pct(bar_w)}" height="{top + plot_h - y:.1f}" rx="1" '
            f'fill="{FILL}" opacity="0.85"><title>step {step["step"]}: '
            f"{step['tokens']:,} tokens sent</title></rect>"
        )
    if trigger and trigger <= scale:
        y = y_of(trigger)
        svg.append(
            f'<line x1="0" x2="100%" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{WARN}" stroke-dasharray="4 3"/><text x="100%" '
            f'y="{y - 3:.1f}" font-size="11" fill="{WARN}" text-anchor="end">'
            f"summarize at {token_count(trigger)}</text>"
        )
    # every step's number while they are few, else the first and the last
    labelled = range(first, last + 1) if count <= 12 else {first, last}
    for step in labelled:
        anchor = "start" if step == first and count > 12 else "middle"
        anchor = "end" if step == last and count > 12 else anchor
        svg.append(
            f'<text x="{_pct(x_of(step))}" y="{height - 5}" font-size="11" '
            f'fill="{MUTED}" text-anchor="{anchor}">{step}</text>'
        )
    svg.append("</svg>")
    return "".join(svg)
