"""The inspector's list views as HTML fragments: skills, files and subagents.

Each row that has more to show is a `<details>`: clicking it opens the text (a file's first
lines, a task's report and transcript) with no script, in a widget and in a static page alike.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING

from jupyter_deepagent.trace.figures import token_count
from jupyter_deepagent.trace.inspector.theme import badge

if TYPE_CHECKING:
    from jupyter_deepagent.trace.inspector.snapshot import Snapshot

__all__ = ["files_panel", "skills_panel", "subagents_panel"]

_KIND_TONES = {
    "offloaded": "warn",
    "aged": "plain",
    "written": "ok",
    "deleted": "warn",
    "transcript": "live",
    "input": "warn",
    "memory": "live",
}


def _empty(text: str) -> str:
    return f'<div class="jdi-empty">{escape(text)}</div>'


def skills_panel(snap: Snapshot) -> str:
    """Every available skill, those loaded in this run marked with the step; skipped skills."""
    skills = snap["skills"]
    available, skipped = skills["available"], skills["skipped"]
    if not available and not skipped:
        return _empty(
            "No skills: add a skills folder with %%agent --skills DIR "
            "(or skills = [...] in .deepagent.toml)."
        )
    loaded = sum(1 for s in available if s["loaded_step"] is not None)
    rows = [
        f'<div class="jdi-head">{len(available)} available · {loaded} loaded in this run'
        + (
            f' · from <span class="jdi-code">{escape(skills["sources"].removeprefix("skills: "))}</span>'
            if skills.get("sources")
            else ""
        )
        + "</div>",
        '<div class="jdi-cols jdi-colhead jdi-skill-cols"><span>skill</span><span>description</span>'
        "<span>path</span><span>in this run</span></div>",
    ]
    for skill in available:
        if skill["loaded_step"] is not None:
            who = "" if skill.get("loaded_by") in (None, "main") else f" by {skill['loaded_by']}"
            state = badge(f"loaded at step {skill['loaded_step']}{who}", "ok")
        else:
            state = badge("available", "plain")
        rows.append(
            f'<div class="jdi-cols jdi-skill-cols jdi-row jdi-skill" '
            f'data-loaded="{"yes" if skill["loaded_step"] is not None else "no"}">'
            f"<b>{escape(skill['name'])}</b><span>{escape(skill['description'])}</span>"
            f'<span class="jdi-path" title="{escape(skill["path"])}">'
            f"{escape(skill['path'])}</span><span>{state}</span></div>"
        )
    for item in skipped:
        rows.append(f'<div class="jdi-row jdi-warning jdi-cols">⚠ {escape(item["message"])}</div>')
    return "".join(rows)


def files_panel(snap: Snapshot) -> str:
    """Files the run put in the virtual filesystem, by mount; each opens to its first lines."""
    files = snap["files"]
    if not files["mounts"]:
        return _empty("No files written, offloaded or saved in this run yet.")
    rows = []
    for group in files["mounts"]:
        rows.append(
            f'<div class="jdi-mount"><span class="jdi-code">{escape(group["mount"])}'
            f'</span> <span class="jdi-muted">{len(group["files"])}</span></div>'
        )
        rows.append(
            '<div class="jdi-cols jdi-colhead jdi-file-cols"><span>path</span><span>kind</span>'
            "<span>tool</span><span class='jdi-num'>tokens</span>"
            "<span class='jdi-num'>step</span></div>"
        )
        for entry in group["files"]:
            size = entry.get("tokens")
            preview = entry.get("preview") or ""
            body = (
                f'<pre class="jdi-pre">{escape(preview)}</pre>'
                if preview
                else '<div class="jdi-pre jdi-muted">No preview in the run events: open '
                "the file with read_file or from the file browser.</div>"
            )
            note = (
                f'<div class="jdi-muted" style="margin-left:32px">{escape(entry["note"])}</div>'
                if entry.get("note")
                else ""
            )
            rows.append(
                f'<details class="jdi-row jdi-file" data-kind="{escape(entry["kind"])}">'
                f'<summary class="jdi-cols jdi-file-cols"><span class="jdi-path" '
                f'title="{escape(entry["path"])}">{escape(entry["path"])}</span>'
                f"<span>{badge(entry['kind'], _KIND_TONES.get(entry['kind'], 'plain'))}</span>"
                f'<span class="jdi-muted">{escape(str(entry.get("tool") or ""))}</span>'
                f'<span class="jdi-num">{token_count(size) if size else ""}</span>'
                f'<span class="jdi-num jdi-muted">{escape(str(entry.get("step") or ""))}</span>'
                f"</summary>{note}{body}</details>"
            )
    return "".join(rows)


def _cell(value: object) -> str:
    if value is None:
        return '<span class="jdi-muted">—</span>'
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, (list, dict)):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = str(value)
    return escape(text if len(text) <= 120 else text[:119] + "…")


_DETAIL_COLUMNS = (
    "task_id",
    "result",
    "files_written",
    "transcript_path",
    "started_at",
    "tokens_in",
    "tokens_out",
    "error",
)


def subagents_panel(snap: Snapshot) -> str:
    """The subagent results (compact columns, the rest on demand) and each task's transcript."""
    table = snap["subagents"]
    running = table.get("running") or []
    if not table["rows"] and not running:
        return _empty("No subagent tasks in this run.")
    parts = []
    if table["rows"]:
        compact = table["compact"]
        numeric = {"tokens", "seconds"}
        head = "".join(
            f'<th class="{"jdi-num" if c in numeric else ""}">'
            f"{escape('task' if c == 'description' else c)}</th>"
            for c in compact
        )
        body = []
        for row in table["rows"]:
            cells = []
            for column in compact:
                value = row.get(column)
                if column == "status":
                    tone = "ok" if value == "ok" else "error" if value == "error" else "warn"
                    cells.append(f"<td>{badge(str(value), tone)}</td>")
                elif column == "tokens":
                    cells.append(f'<td class="jdi-num">{token_count(value or 0)}</td>')
                elif column == "seconds":
                    cells.append(f'<td class="jdi-num">{(value or 0):.1f} s</td>')
                else:
                    cells.append(f"<td>{_cell(value)}</td>")
            body.append(f'<tr class="jdi-task">{"".join(cells)}</tr>')
        count = len(table["rows"])
        parts.append(
            f'<div class="jdi-head">{count} task{"s" if count != 1 else ""} · as '
            f'<span class="jdi-code">results_frame()</span> returns them</div>'
            f'<table class="jdi-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>"
        )
    for task in running:
        parts.append(
            f'<div class="jdi-row jdi-cols">{badge("running", "live")} '
            f"{escape(str(task['subagent']))}: {escape(str(task['description']))}</div>"
        )
    if table["rows"]:
        parts.append('<div class="jdi-sub">Each task</div>')
    for row in table["rows"]:
        details = "".join(
            f'<div><span class="jdi-muted">{escape(c)}:</span> {_cell(row.get(c))}</div>'
            for c in _DETAIL_COLUMNS
            if c != "result"
        )
        lines = table["transcripts"].get(str(row.get("task_id")), [])
        transcript = "".join(
            f'<li><span class="jdi-muted">step {escape(str(e["step"]))} '
            f"{escape(e['kind'])}</span> {escape(e['text'])}</li>"
            for e in lines
            if e["kind"] != "report"
        )
        parts.append(
            f'<details class="jdi-row jdi-transcript"><summary class="jdi-cols">'
            f"<span><b>{escape(str(row.get('subagent')))}</b> · "
            f"{escape(str(row.get('description') or ''))}</span></summary>"
            f'<div style="margin-left:12px">{details}'
            f'<div class="jdi-sub">Report</div><pre class="jdi-pre">'
            f"{escape(str(row.get('result') or ''))}</pre>"
            f'<div class="jdi-sub">Transcript</div><ol class="jdi-list">{transcript}</ol>'
            "</div></details>"
        )
    return "".join(parts)
