"""The inspector as plain text: a few lines for terminals and for `text/plain` in saved notebooks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from jupyter_deepagent.events import MODEL_CALL, RUN_FINISHED, RunEvent, RunFinishedEvent
from jupyter_deepagent.trace.figures import cost_parts_text, figures_text, token_count

if TYPE_CHECKING:
    from jupyter_deepagent.trace.inspector.snapshot import Snapshot

__all__ = ["cache_note", "snapshot_text", "summary_text", "trace_line"]


def cache_note(tokens_in: object, cached: object, written: object = None) -> str:
    """What share of the input tokens a provider read from its prompt cache ("cached 71% of
    input tokens", plus what was written to it); "" when the provider reported no cache counts."""
    if not isinstance(cached, int) and not isinstance(written, int):
        return ""
    total = tokens_in if isinstance(tokens_in, int) else 0
    read = cached if isinstance(cached, int) else 0
    note = f"cached {read / total:.0%} of input tokens" if total else f"{token_count(read)} cached"
    if isinstance(written, int) and written:
        note += f", {token_count(written)} written to the cache"
    return note


def summary_text(snap: Snapshot) -> str:
    """One line: model, status, model calls, tokens in and out, duration, how full the window
    was."""
    run, context = snap["run"], snap["context"]
    cached = cache_note(
        run.get("tokens_in"), run.get("tokens_in_cached"), run.get("tokens_in_cache_write")
    )
    parts = [
        str(run.get("model") or "model ?"),
        str(run.get("status") or "running"),
        figures_text(run, cached=f" ({cached})" if cached else ""),
        *([str(run["budget"])] if run.get("budget") else []),
    ]
    if context.get("window"):
        parts.append(
            f"last request {context['tokens']:,} of {context['window']:,} tokens "
            f"({context['share']:.1%})"
        )
    return " · ".join(parts)


def snapshot_text(snap: Snapshot) -> str:
    """The run in a few lines: summary, gauge, prompt sections, skills, files, subagents."""
    lines = [f"Run: {summary_text(snap)}"]
    run = snap["run"]
    if run.get("model_calls") and run.get("cost"):
        lines.append(f"Cost: {cost_parts_text(run.get('cost_by_part'))}")
    context = snap["context"]
    if context.get("window"):
        width = 30
        filled = round(min(context["share"], 1.0) * width)
        mark = round(context["trigger"] / context["window"] * width) if context["window"] else 0
        bar = ["█" if i < filled else "·" for i in range(width)]
        if 0 <= mark < width:
            bar[mark] = "|"
        marks = len(context["marks"])
        lines.append(
            f"Context: [{''.join(bar)}] summarization at {context['trigger']:,}, "
            f"{marks} compression event{'' if marks == 1 else 's'}"
        )
    prompt = snap["prompt"]
    if prompt["sections"]:
        names = ", ".join(
            f"{s['name']} {s['tokens']:,}" + (f" ({s['change']})" if s["change"] else "")
            for s in prompt["sections"]
        )
        lines.append(
            f"Prompt: {len(prompt['sections'])} sections, {prompt['tokens']:,} tokens: {names}"
        )
    skills = snap["skills"]
    if skills["available"] or skills["skipped"]:
        loaded = [
            f"{s['name']} (step {s['loaded_step']})"
            for s in skills["available"]
            if s["loaded_step"] is not None
        ]
        lines.append(
            f"Skills: {len(skills['available'])} available; loaded: "
            f"{', '.join(loaded) or 'none'}"
            + (f"; {len(skills['skipped'])} skipped" if skills["skipped"] else "")
        )
    files = [f for group in snap["files"]["mounts"] for f in group["files"]]
    if files:
        shown = ", ".join(f"{f['path']} ({f['kind']})" for f in files[:6])
        more = f" and {len(files) - 6} more" if len(files) > 6 else ""
        lines.append(f"Files: {shown}{more}")
    rows = snap["subagents"]["rows"]
    if rows:
        done = sum(1 for r in rows if r.get("status") == "ok")
        lines.append(f"Subagents: {len(rows)} task{'' if len(rows) == 1 else 's'}, {done} ok")
    return "\n".join(lines)


def trace_line(events: Sequence[RunEvent], messages: int) -> str:
    """`repr(RunTrace)`: one line (status, model calls, tokens, events, messages), never the state."""
    finished: RunFinishedEvent | None = next(
        (e for e in reversed(events) if "type" in e and e["type"] == RUN_FINISHED),
        None,
    )
    if finished is None:
        calls = [e for e in events if "type" in e and e["type"] == MODEL_CALL]
        status, count = "running", len(calls)
        tokens_in = sum(int(e.get("tokens_in") or 0) for e in calls)
    else:
        status, count = finished.get("status"), finished.get("model_calls", 0)
        tokens_in = int(finished.get("tokens_in") or 0)
    return (
        f"<RunTrace {status} · {count} model calls · {token_count(tokens_in)} tokens in · "
        f"{len(events)} events · {messages} messages>"
    )
