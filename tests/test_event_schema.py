"""The run-event schema in code: builders refuse what the schema does not define, every event
carries the version, and the docs and the JSON Schema are generated from the definitions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import jupyter_deepagent.events as events
from jupyter_deepagent.events import (
    EVENT_DEFINITIONS,
    EVENT_TYPES,
    SCHEMA_VERSION,
    build_event,
    event_table,
    validate_event,
)
from jupyter_deepagent.events.schema import CHECK_EVENTS_VARIABLE, field_docs
from jupyter_deepagent.events.typescript import event_typescript

ROOT = Path(__file__).resolve().parent.parent


def _warning(**fields: object) -> dict:
    return build_event("warning", agent="main", task_id=None, **fields)


def test_an_unknown_type_is_an_error_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown run event type 'tool_started'.*tool_call"):
        build_event("tool_started", agent="main", task_id=None, tool="ls")


def test_a_missing_field_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="warning event without source"):
        _warning(message="the window is a guess")


def test_a_field_not_in_the_schema_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="not in the schema: severity"):
        _warning(message="m", source=None, severity="high")


def test_every_event_carries_the_schema_version() -> None:
    event = _warning(message="m", source="context_window")

    assert event["schema"] == SCHEMA_VERSION == 1
    validate_event(event)


def test_a_value_of_the_wrong_type_fails_validation() -> None:
    event = {**_warning(message="m", source=None), "message": 42}

    with pytest.raises(ValueError, match="warning event does not follow the schema"):
        validate_event(event)


def test_validation_requires_the_run_stamp_when_asked() -> None:
    with pytest.raises(ValueError, match="without run_id, seq"):
        validate_event(_warning(message="m", source=None), stamped=True)


def test_an_event_from_another_schema_version_is_refused() -> None:
    event = {**_warning(message="m", source=None), "schema": 2}

    with pytest.raises(ValueError, match="schema 2, expected 1"):
        validate_event(event)


def test_every_type_literal_matches_its_registry_key_and_every_field_is_documented() -> None:
    for event_type, definition in EVENT_DEFINITIONS.items():
        docs = field_docs(definition)
        assert set(docs) == set(definition.__annotations__), event_type
        undocumented = [name for name, doc in docs.items() if not doc and name != "type"]
        assert not undocumented, (event_type, undocumented)
        assert definition.__doc__, event_type
    assert len(set(EVENT_TYPES)) == len(EVENT_TYPES)


def test_the_api_page_and_the_module_docstring_hold_the_generated_table() -> None:
    table = event_table()
    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")

    assert table in page, "docs/python-api.md table stale: python -m jupyter_deepagent.events --table"
    assert table in (events.__doc__ or ""), "the events docstring's table is stale"
    for event_type in EVENT_TYPES:
        assert f"| `{event_type}` |" in table


def test_the_json_schema_covers_every_type_and_field(tmp_path: Path) -> None:
    target = tmp_path / "events.json"
    subprocess.run(
        [sys.executable, "-m", "jupyter_deepagent.events", "--json-schema", str(target)],
        check=True, capture_output=True, text=True,
    )
    schema = json.loads(target.read_text(encoding="utf-8"))

    assert set(schema["discriminator"]["mapping"]) == set(EVENT_TYPES)
    definitions = schema["$defs"]
    for event_type, definition in EVENT_DEFINITIONS.items():
        entry = definitions[definition.__name__]
        assert entry["properties"]["type"]["const"] == event_type
        assert entry["properties"]["schema"]["const"] == SCHEMA_VERSION
        assert entry["additionalProperties"] is False
        assert set(entry["properties"]) == set(definition.__annotations__)
        assert all(prop.get("description") for name, prop in entry["properties"].items()
                   if name != "type")


def test_the_environment_switch_makes_an_invalid_event_raise_where_it_is_built() -> None:
    code = (
        "from jupyter_deepagent.events import build_event\n"
        "try:\n"
        "    build_event('warning', agent='main', task_id=None, message=3, source=None)\n"
        "except ValueError as exc:\n"
        "    print('refused:', exc)\n"
    )
    env = {**os.environ, CHECK_EVENTS_VARIABLE: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)

    assert out.stdout.startswith("refused: warning event does not follow the schema")


def test_the_sidebars_typescript_event_types_are_generated_from_the_schema() -> None:
    committed = ROOT / "labextension" / "src" / "events.ts"
    fix = "python -m jupyter_deepagent.events --typescript labextension/src/events.ts"
    assert committed.read_text(encoding="utf-8") == event_typescript(), f"regenerate it: {fix}"
    text = event_typescript()
    for event_type in EVENT_TYPES:
        assert f'type: "{event_type}";' in text and f'| "{event_type}"' in text
