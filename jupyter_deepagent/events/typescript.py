"""The run-event schema as TypeScript declarations, generated from its JSON Schema.

The JupyterLab sidebar (`labextension/src/events.ts`) imports these types, so its reading of an
event cannot drift from the Python definitions: `python -m jupyter_deepagent.events --typescript
labextension/src/events.ts` writes the file, and a test fails when the committed one differs.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["doc_comment", "event_typescript"]

_HEADER = """\
/**
 * Run events, schema version {version}: generated from the Python definitions in
 * `jupyter_deepagent/events/` by `python -m jupyter_deepagent.events --typescript`.
 * Do not edit by hand; a test checks that this file matches the schema.
 */
"""


def _type(prop: dict[str, Any]) -> str:
    """The TypeScript type of one JSON Schema property."""
    if "const" in prop:
        return json.dumps(prop["const"])
    if "enum" in prop:
        return " | ".join(json.dumps(value) for value in prop["enum"])
    if "anyOf" in prop:
        return " | ".join(dict.fromkeys(_type(option) for option in prop["anyOf"]))
    kind = prop.get("type")
    if kind in ("integer", "number"):
        return "number"
    if kind in ("string", "boolean", "null"):
        return str(kind)
    if kind == "array":
        items = _type(prop.get("items", {}))
        return f"Array<{items}>" if " " in items else f"{items}[]"
    if kind == "object":
        values = prop.get("additionalProperties")
        return (
            f"Record<string, {_type(values)}>"
            if isinstance(values, dict)
            else ("Record<string, unknown>")
        )
    return "unknown"


def doc_comment(text: str, indent: str) -> list[str]:
    """`text` as a one-line TSDoc comment at `indent` (none for an empty text)."""
    text = " ".join(text.split()).replace("*/", "* /")
    return [f"{indent}/** {text} */"] if text else []


def event_typescript() -> str:
    """The declarations: one interface per event type, `RunEvent` (their union) and
    `RunEventType` (the `type` values), with the schema's descriptions as comments."""
    from jupyter_deepagent.events.schema import SCHEMA_VERSION, event_json_schema

    schema = event_json_schema()
    lines = [_HEADER.format(version=SCHEMA_VERSION)]
    lines.append(f"export const EVENT_SCHEMA_VERSION = {SCHEMA_VERSION};\n")
    names, types = [], []
    for name, entry in sorted(schema.get("$defs", {}).items()):
        properties = entry.get("properties", {})
        if "type" not in properties or "const" not in properties["type"]:
            continue  # a helper definition, not an event
        names.append(name)
        types.append(json.dumps(properties["type"]["const"]))
        required = set(entry.get("required", []))
        lines += doc_comment(entry.get("description", ""), "")
        lines.append(f"export interface {name} {{")
        for field, prop in properties.items():
            lines += doc_comment(prop.get("description", ""), "  ")
            optional = "" if field in required else "?"
            lines.append(f"  {field}{optional}: {_type(prop)};")
        lines.append("}\n")
    lines.append("/** Any run event; `type` says which. */")
    lines.append("export type RunEvent =\n" + "\n".join(f"  | {n}" for n in names) + ";\n")
    lines.append("/** The `type` of every run event. */")
    lines.append(
        "export type RunEventType =\n" + "\n".join(f"  | {t}" for t in sorted(types)) + ";\n"
    )
    return "\n".join(lines)
