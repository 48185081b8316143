"""The sidebar's comm protocol as TypeScript declarations, generated from `protocol.py`.

The JupyterLab sidebar (`labextension/src/protocol.ts`) imports these constants and message
types, so the comm target, the protocol version and the messages cannot drift between the two
languages: `python -m jupyter_deepagent.jupyter.sidebar.typescript labextension/src/protocol.ts`
writes the file, and a test fails when the committed one differs. The run-event types the
messages refer to come from `events.ts`, generated from the event schema the same way.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
import types
import typing
from pathlib import Path
from typing import Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints

from jupyter_deepagent.events.typescript import doc_comment
from jupyter_deepagent.jupyter.sidebar import protocol

__all__ = ["main", "protocol_typescript"]

_HEADER = """\
/**
 * The sidebar's comm protocol, version {version}: generated from the Python definitions in
 * `jupyter_deepagent/jupyter/sidebar/protocol.py` by
 * `python -m jupyter_deepagent.jupyter.sidebar.typescript`.
 * Do not edit by hand; a test checks that this file matches the Python protocol.
 */

import type {{ RunEventType }} from "./events";

export type {{ RunEventType }};
"""

_CONSTANTS = ("PROTOCOL_VERSION", "TARGET")
"""The module constants the sidebar uses."""

_OUTGOING = (protocol.RequestMessage,)
"""The messages the sidebar sends; `protocol.KERNEL_MESSAGES` are those it receives."""

_FIELD_TYPES = {("RunEventFields", "type"): "RunEventType"}
"""Fields typed by `events.ts` where the Python says only `str`."""


def _docs(source: str) -> dict[str, dict[str, str]]:
    """The docstring after each annotated or assigned name, per class ("" for the module)."""
    found: dict[str, dict[str, str]] = {}

    def read(owner: str, body: list[ast.stmt]) -> None:
        docs = found.setdefault(owner, {})
        for item, following in zip(body, [*body[1:], None], strict=True):
            target: ast.expr | None = item.target if isinstance(item, ast.AnnAssign) else None
            if isinstance(item, ast.Assign) and len(item.targets) == 1:
                target = item.targets[0]
            if (
                isinstance(target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                docs[target.id] = " ".join(following.value.value.split())
            if isinstance(item, ast.ClassDef):
                read(item.name, item.body)

    read("", ast.parse(source).body)
    return found


def _type(hint: object) -> str:
    """The TypeScript type of one Python annotation of the protocol."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return " | ".join(json.dumps(value) for value in args)
    if origin in (Union, types.UnionType):
        return " | ".join(dict.fromkeys(_type(arg) for arg in args))
    if origin is list:
        item = _type(args[0])
        return f"Array<{item}>" if " " in item else f"{item}[]"
    if origin is dict:
        return f"Record<string, {_type(args[1])}>"
    simple = {str: "string", int: "number", float: "number", bool: "boolean", object: "unknown"}
    if hint is type(None):
        return "null"
    if isinstance(hint, type) and hint in simple:
        return simple[hint]
    if isinstance(hint, type) and typing.is_typeddict(hint):
        return hint.__name__
    msg = f"no TypeScript type for {hint!r}: add it to the generator"
    raise TypeError(msg)


def _interface(definition: type, docs: dict[str, dict[str, str]]) -> list[str]:
    name = definition.__name__
    lines = doc_comment(inspect.getdoc(definition) or "", "")
    lines.append(f"export interface {name} {{")
    total = getattr(definition, "__total__", True)
    for field, hint in get_type_hints(definition, include_extras=True).items():
        qualifier = get_origin(hint)
        optional = qualifier is NotRequired or (not total and qualifier is not Required)
        if qualifier in (NotRequired, Required):
            hint = get_args(hint)[0]
        lines += doc_comment(docs.get(name, {}).get(field, ""), "  ")
        written = _FIELD_TYPES.get((name, field)) or _type(hint)
        lines.append(f"  {field}{'?' if optional else ''}: {written};")
    lines.append("}\n")
    return lines


def _nested(definitions: tuple[type, ...]) -> list[type]:
    """The message types and the `TypedDict`s their fields use, each once, used ones first."""
    order: list[type] = []

    def visit(definition: type) -> None:
        if definition in order:
            return
        for hint in get_type_hints(definition).values():
            for part in (hint, *get_args(hint)):
                if typing.is_typeddict(part):
                    visit(part)
        order.append(definition)

    for definition in definitions:
        visit(definition)
    return order


def protocol_typescript() -> str:
    """The declarations: the constants, one interface per message (and per `TypedDict` a message
    holds), and `KernelMessage`, the union of what the kernel sends."""
    docs = _docs(inspect.getsource(protocol))
    lines = [_HEADER.format(version=protocol.PROTOCOL_VERSION)]
    for constant in _CONSTANTS:
        lines += doc_comment(docs[""].get(constant, ""), "")
        lines.append(f"export const {constant} = {json.dumps(getattr(protocol, constant))};\n")
    for definition in _nested((*_OUTGOING, *protocol.KERNEL_MESSAGES)):
        lines += _interface(definition, docs)
    lines.append("/** Any message the kernel sends; `type` says which. */")
    names = "\n".join(f"  | {message.__name__}" for message in protocol.KERNEL_MESSAGES)
    lines.append(f"export type KernelMessage =\n{names};\n")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write the declarations to the path given (default: stdout); return the exit status."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(f"usage: python -m {__name__} [PATH]", file=sys.stderr)
        return 2
    text = protocol_typescript()
    if not args or args[0] == "-":
        sys.stdout.write(text)
    else:
        Path(args[0]).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
