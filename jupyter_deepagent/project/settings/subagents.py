"""Subagents a folder's configuration declares, for `%%agent` and for the served agent alike.

In `.deepagent.toml` (or `[[tool.jupyter-deepagent.subagents]]` in `pyproject.toml`):

    [[subagents]]
    name = "judge"
    description = "Weighs the evidence on one claim."
    system_prompt = "Judge the claim from the sources you are given."
    skills = ["skills/"]                 # optional: skill folders (relative: in /workspace/)
    interrupt_on = ["write_file"]        # optional: more tools that wait for your approval
    [subagents.response_format]          # optional: a JSON schema; each field a column of the
    title = "Verdict"                    # run's results DataFrame
    type = "object"
    properties = { verdict = { type = "string" }, confident = { type = "boolean" } }

`%agent config subagents=[{"name": ..., "description": ...}]` takes the same as JSON. A
subagent's `interrupt_on` adds to the notebook's: it asks for everything the notebook's
`interrupt_on` lists, and for every `python` call unless `python_approval = false`. Each
subagent uses the agent's model and tools (its own model would escape the research log's replay,
which records the agent's model); the general-purpose subagent is always there besides.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import NotRequired, TypedDict

from jupyter_deepagent._exceptions import InputError
from jupyter_deepagent.project.settings.paths import virtual_path

__all__ = ["SubagentSetting", "check_subagents", "subagent_specs"]

_SUBAGENT_KEYS = (
    "name",
    "description",
    "system_prompt",
    "skills",
    "interrupt_on",
    "response_format",
)
"""The keys a configured subagent may have (`name` and `description` are required)."""


class SubagentSetting(TypedDict):
    """One checked `[[subagents]]` table, as the settings keep it."""

    name: str
    description: str
    system_prompt: NotRequired[str]
    skills: NotRequired[list[str]]
    """Skill folders (relative: in /workspace/)."""
    interrupt_on: NotRequired[list[str]]
    """More tools that wait for approval."""
    response_format: NotRequired[dict[str, object]]
    """A JSON schema; each property a column of the run's results DataFrame."""


_TEXT_KEYS = ("name", "description", "system_prompt")
_LIST_KEYS = ("skills", "interrupt_on")


def check_subagents(name: str, value: object, source: str) -> tuple[SubagentSetting, ...]:
    """The `subagents` setting (`name`) checked: a list of tables (TOML) or of objects (JSON
    text).

    Raises:
        InputError: Not a list of tables, an unknown or missing key, a value of the wrong type,
            a name given twice, or a name the `task` tool cannot take; the message names the
            source and the subagent.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError as exc:
            msg = (
                f"{source}: subagents must be a JSON list of objects, e.g. "
                f'[{{"name": "judge", "description": "..."}}]; {exc}'
            )
            raise InputError(msg, source=source) from None
    if not isinstance(value, Sequence) or isinstance(value, str):
        msg = f"{source}: subagents must be a list of tables ([[subagents]]), got {value!r}"
        raise InputError(msg, source=source)
    checked: list[SubagentSetting] = []
    for index, raw in enumerate(value):
        where = f"{source}: subagents[{index}]"
        checked.append(_check_one(raw, where, source))
    names = [spec["name"] for spec in checked]
    twice = sorted({given for given in names if names.count(given) > 1})
    if twice:
        msg = f"{source}: subagents: the name {twice[0]!r} is given twice; names must differ"
        raise InputError(msg, source=source)
    return tuple(checked)


def _check_one(raw: object, where: str, source: str) -> SubagentSetting:
    if not isinstance(raw, Mapping):
        msg = f"{where} must be a table with name and description, got {raw!r}"
        raise InputError(msg, source=source)
    unknown = sorted(set(raw) - set(_SUBAGENT_KEYS))
    if unknown:
        extra = " A subagent uses the agent's model." if "model" in unknown else ""
        msg = (
            f"{where} has unknown key {unknown[0]!r}; known keys: "
            f"{', '.join(_SUBAGENT_KEYS)}.{extra}"
        )
        raise InputError(msg, source=source)
    for key in _TEXT_KEYS:
        if key in raw and not isinstance(raw[key], str):
            msg = f"{where}: {key} must be text, got {raw[key]!r}"
            raise InputError(msg, source=source)
    for key in ("name", "description"):
        if not str(raw.get(key) or "").strip():
            msg = f"{where} needs a {key}"
            raise InputError(msg, source=source)
    for key in _LIST_KEYS:
        if key in raw and not (
            isinstance(raw[key], Sequence)
            and not isinstance(raw[key], str)
            and all(isinstance(item, str) for item in raw[key])
        ):
            msg = f"{where}: {key} must be a list of strings, got {raw[key]!r}"
            raise InputError(msg, source=source)
    schema = raw.get("response_format")
    if schema is not None and not (isinstance(schema, Mapping) and schema.get("properties")):
        msg = (
            f"{where}: response_format must be a JSON schema table with properties, got {schema!r}"
        )
        raise InputError(msg, source=source)
    spec = SubagentSetting(name=raw["name"].strip(), description=raw["description"])
    if "system_prompt" in raw:
        spec["system_prompt"] = raw["system_prompt"]
    if "skills" in raw:
        spec["skills"] = raw["skills"]
    if "interrupt_on" in raw:
        spec["interrupt_on"] = raw["interrupt_on"]
    if "response_format" in raw:
        spec["response_format"] = raw["response_format"]
    from jupyter_deepagent.harness.subagents.specs import normalize_subagents

    try:  # the harness's own rules for a subagent's name and description
        normalize_subagents(subagent_specs([spec]), general_purpose=False)
    except (TypeError, ValueError) as exc:
        msg = f"{where}: {exc}"
        raise InputError(msg, source=source) from None
    return spec


def subagent_specs(configured: Sequence[SubagentSetting]) -> list[dict[str, object]]:
    """The harness's dict specs of checked `subagents` (skill folders as virtual paths,
    approvals as `interrupt_on` flags)."""
    specs: list[dict[str, object]] = []
    for raw in configured:
        spec: dict[str, object] = {"name": raw["name"], "description": raw["description"]}
        if raw.get("system_prompt"):
            spec["system_prompt"] = raw["system_prompt"]
        if "skills" in raw:
            spec["skills"] = [virtual_path(path) for path in raw["skills"]]
        if "interrupt_on" in raw:
            spec["interrupt_on"] = dict.fromkeys(raw["interrupt_on"], True)
        if raw.get("response_format"):
            spec["response_format"] = dict(raw["response_format"])
        specs.append(spec)
    return specs
