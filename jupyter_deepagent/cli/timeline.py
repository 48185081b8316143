"""`jupyter-deepagent log`: a research log as a readable timeline (text, Markdown or JSON).

Each run says what it cost (its record's `cost`, or for a record made before prices existed its
recorded tokens at the shipped prices) and the timeline ends with the notebook's total. Each run names its cell as JupyterLab shows it in the saved notebook (`In [4]`, or `cell 7 of 12,
not run`) when the notebook is given; `record N` is the run's place in the log."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, cast

from jupyter_deepagent.events import RUN_STARTED, TOOL_CALL
from jupyter_deepagent.harness.models.label import answered_by
from jupyter_deepagent.trace.figures import cost_text, figures_text, token_count
from jupyter_deepagent.trace.run_totals import run_cost

__all__ = ["format_timeline", "timeline"]


GONE = "a cell no longer in the notebook"
"""How a run whose cell the notebook no longer has is named."""


def _tokens(value: object) -> str:
    return token_count(int(cast("int", value) or 0))


def _cached(entry: Mapping[str, Any]) -> str:
    """ " (71% cached)" when the provider reported cached input tokens, plus what was written to
    its cache; "" when it reported none."""
    cached, written = entry.get("tokens_in_cached"), entry.get("tokens_in_cache_write")
    if not isinstance(cached, int) and not isinstance(written, int):
        return ""
    total = int(entry.get("tokens_in") or 0)
    parts = [f"{(cached or 0) / total:.0%} cached" if total else f"{_tokens(cached)} cached"]
    if isinstance(written, int) and written:
        parts.append(f"{_tokens(written)} written to the cache")
    return f" ({', '.join(parts)})"


def _when(record: dict[str, Any]) -> str:
    started = next((e.get("time") for e in record.get("events", []) if e.get("time")), None)
    if not isinstance(started, (int, float)):
        return "?"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(started))


def _args(args: object) -> str:
    if not isinstance(args, dict):
        return ""
    parts = []
    for key, value in args.items():
        if isinstance(value, dict) and "chars" in value:
            value = f"({value['chars']} chars)"
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={text}")
    line = " ".join(parts)
    return line if len(line) <= 70 else line[:69] + "…"


def _cost(record: Mapping[str, Any]) -> tuple[float | None, int]:
    """A record's cost in US dollars (None: no call had a known price) and its calls of unknown
    price: as recorded, or from its events for a record made before prices existed."""
    if "cost" in record:
        usd, unpriced = record.get("cost"), record.get("cost_unpriced_calls")
        return (
            float(usd) if isinstance(usd, (int, float)) else None,
            unpriced if isinstance(unpriced, int) else 0,
        )
    cost = run_cost(record.get("events") or [])
    return cost.usd, cost.unpriced_calls


def _decision(record: dict[str, Any]) -> str:
    """A resume's human decision in a line: "decision: reject python (via button): not now"."""
    if record.get("kind") != "resume":
        return ""
    decided = record.get("decision") or {}
    if decided.get("decision") in ("continue", "raise", "stop") and not decided.get("tools"):
        budget = f" to {decided['budget']}" if decided.get("budget") else ""
        return f"budget: {decided.get('decision')}{budget} (via {decided.get('via')})"
    tools = ", ".join(str(t) for t in decided.get("tools") or [])
    line = f"decision: {decided.get('decision')} {tools} (via {decided.get('via')})"
    if decided.get("message"):
        line += f": {decided['message']}"
    if decided.get("edits"):
        line += f"; edited {_args(decided['edits'])}"
    return " ".join(line.split())


def timeline(
    records: list[dict[str, Any]], cells: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """One entry per run: when, which cell, model, what answered it (replayed, scripted, live,
    mixed), calls, tokens in and out (and the input tokens read from and written to a provider's
    prompt cache, None when not reported), its cost (US dollars, None: price unknown; with its
    calls of unknown price), its duration, status (and `budget` when the budget paused or stopped
    it) and its tool calls in order; a run resumed after an approval or a budget pause starts
    with the human decision.

    Args:
        records: The log's records, in order.
        cells: The notebook's agent cells as Lab shows them, by cell id and by source key
            (`shown_as`; None: the notebook is not known, "" is given).
    """
    entries = []
    for number, record in enumerate(records, 1):
        if record.get("kind") not in ("run", "resume"):
            continue
        events = record.get("events", [])
        title = next((e.get("input") for e in events if e.get("type") == RUN_STARTED), "")
        decision = _decision(record)
        if decision:
            title = decision
        usd, unpriced = _cost(record)
        entries.append(
            {
                "number": number,
                "when": _when(record),
                "cell": record.get("cell_id") or record.get("source_key"),
                "shown_as": _shown_as(record, cells),
                "request": " ".join(str(title or "").split())[:80],
                "thread": record.get("thread"),
                "model": record.get("model"),
                "replay": answered_by(str(record.get("replay")), str(record.get("model"))),
                "status": record.get("status"),
                "calls": len(record.get("calls", [])),
                "tokens_in": record.get("tokens_in", 0),
                "tokens_out": record.get("tokens_out", 0),
                "tokens_in_cached": record.get("tokens_in_cached"),
                "tokens_in_cache_write": record.get("tokens_in_cache_write"),
                "seconds": record.get("seconds"),
                "cost": usd,
                "cost_unpriced_calls": unpriced,
                "budget": record.get("budget"),
                "decision": record.get("decision") if record.get("kind") == "resume" else None,
                "tools": [
                    ("" if e.get("task_id") is None else f"[{e.get('agent')}] ")
                    + f"{e.get('tool')} {_args(e.get('args'))}".rstrip()
                    for e in events
                    if e.get("type") == TOOL_CALL
                ],
            }
        )
    return entries


def _total(entries: list[dict[str, Any]]) -> str:
    """What the log's runs cost together: "$0.0150 over 3 runs", "+ price unknown for N calls"
    when some had none."""
    priced = [e["cost"] for e in entries if isinstance(e["cost"], (int, float))]
    unpriced = sum(int(e["cost_unpriced_calls"] or 0) for e in entries)
    runs = f" over {len(entries)} run{'s' if len(entries) != 1 else ''}"
    if not priced:
        return f"price unknown{runs}"
    return cost_text(sum(priced), unpriced) + runs


def _shown_as(record: dict[str, Any], cells: Mapping[str, str] | None) -> str:
    if cells is None:
        return ""
    for key in (record.get("cell_id"), record.get("source_key")):
        if isinstance(key, str) and key in cells:
            return cells[key]
    return GONE


def format_timeline(
    records: list[dict[str, Any]], style: str = "text", cells: Mapping[str, str] | None = None
) -> str:
    """The timeline of `records` as "text", "markdown" or "json"; `cells` names each run's
    cell (see `timeline`).

    Raises:
        ValueError: An unknown style.
    """
    entries = timeline(records, cells)
    if style == "json":
        return json.dumps(entries, indent=2, ensure_ascii=False)
    if style not in ("text", "markdown"):
        msg = f"unknown format {style!r}: use text, markdown or json"
        raise ValueError(msg)
    lines = ["# Research log", ""] if style == "markdown" else []
    for entry in entries:
        figures = figures_text({**entry, "model_calls": entry["calls"]}, cached=_cached(entry))
        status = entry["status"] + (f" ({entry['budget']} at budget)" if entry["budget"] else "")
        head = f"{entry['when']} · {entry['model']} · {entry['replay']} · {figures} · {status}"
        cell = f"{entry['shown_as']} · " if entry["shown_as"] else ""
        if style == "markdown":
            title = f"{entry['shown_as']}: " if entry["shown_as"] else ""
            lines += [f"## {title}{entry['request']}", "", f"*{head} · record {entry['number']}*"]
            lines += [""] + [f"- `{tool}`" for tool in entry["tools"]] + [""]
        else:
            lines.append(f"{cell}{head} · record {entry['number']}")
            lines.append(f"   {entry['request']}")
            lines += [f"     · {tool}" for tool in entry["tools"]]
    if not entries:
        lines.append("The research log has no runs yet.")
    else:
        lines += ["", f"{'**' if style == 'markdown' else ''}Notebook total: {_total(entries)}"]
        lines[-1] += "**" if style == "markdown" else ""
    return "\n".join(lines).rstrip() + "\n"
