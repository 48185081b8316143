"""How each setting's value is checked and typed: one coercer per kind of value.

A coercer takes `(name, value, source)` and returns the typed value, or raises `InputError`
naming the source. Each field of `AgentConfig` names its coercer in its declaration
(`field(default=None, metadata=coerced_by(whole_number_or_none))`), so a new setting is one
place. Text (from `%agent config`) is parsed; values from TOML files arrive typed and are checked
the same way.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import Field

from jupyter_deepagent._exceptions import InputError
from jupyter_deepagent.project.module_shadowing import IMPORTABLE
from jupyter_deepagent.project.names import check_variable_name
from jupyter_deepagent.project.storage.database_url import (
    DATABASE_URL_VARIABLE,
    check_database_url,
    database_password,
    mask_database_url,
)

__all__ = [
    "Coercer",
    "coerced_by",
    "coercer_of",
    "database_url",
    "flag",
    "model_keywords",
    "model_spec",
    "module_names",
    "project_name",
    "replay_mode",
    "seconds",
    "seconds_or_none",
    "text",
    "text_list",
    "variable_name",
    "whole_number",
    "whole_number_or_none",
]

Coercer = Callable[[str, object, str], object]
"""`(name, value, source) -> value`: a setting's value checked and typed."""

_COERCER = "coerce"

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_REPLAY_MODES = ("auto", "strict", "off")
_AGENT_CONFIG = "%agent config"


def coerced_by(coercer: Coercer) -> Mapping[str, Coercer]:
    """The metadata of a settings field whose values `coercer` checks."""
    return {_COERCER: coercer}


def coercer_of(setting: Field[object]) -> Coercer:
    """The coercer a settings field names in its metadata (see `coerced_by`)."""
    coercer: Coercer = setting.metadata[_COERCER]
    return coercer


def _refuse(name: str, value: object, source: str, expected: str) -> InputError:
    return InputError(f"{source}: {name} must be {expected}, got {value!r}", source=source)


def text(name: str, value: object, source: str) -> str:
    """Any text, as it is."""
    if isinstance(value, str):
        return value
    raise _refuse(name, value, source, "text")


def flag(name: str, value: object, source: str) -> bool:
    """True or false (also yes/no, on/off, 1/0 as text)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise _refuse(name, value, source, "true or false")


def text_list(name: str, value: object, source: str) -> tuple[str, ...]:
    """A list of strings, or comma-separated text."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise _refuse(name, value, source, "a list of strings (or comma-separated text)")


def module_names(name: str, value: object, source: str) -> tuple[str, ...]:
    """A list of top-level module names, `name*` patterns and `IMPORTABLE`."""
    names = text_list(name, value, source)
    for entry in names:
        name_part = entry[:-1] if entry.endswith("*") else entry
        if entry != IMPORTABLE and not name_part.isidentifier():
            msg = (
                f"{source}: {name} takes top-level module names such as json or "
                f"numpy, a name's start followed by * (langchain_*), and {IMPORTABLE} for every "
                f"standard or installed one; not {entry!r}"
            )
            raise InputError(msg, source=source)
    return names


def _is_none(value: object) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))


def _whole(value: object) -> object:
    """`value`, with digits given as text turned into an int."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def whole_number_or_none(name: str, value: object, source: str) -> int | None:
    """A positive whole number, or none."""
    if _is_none(value):
        return None
    number = _whole(value)
    if isinstance(number, int) and not isinstance(number, bool) and number > 0:
        return number
    raise _refuse(name, number, source, "a positive whole number (or none)")


def whole_number(name: str, value: object, source: str) -> int:
    """A whole number, 0 or more."""
    number = _whole(value)
    if isinstance(number, int) and not isinstance(number, bool) and number >= 0:
        return number
    raise _refuse(name, number, source, "a whole number, 0 or more")


def _number(value: object) -> float | None:
    """`value` as a finite number of seconds (from a number or text), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if (
        isinstance(value, (int, float))
        and value == value
        and value not in (float("inf"), float("-inf"))
    ):
        return float(value)
    return None


def seconds_or_none(name: str, value: object, source: str) -> float | None:
    """A positive number of seconds, or none (no limit)."""
    number = _number(value)
    if number is None and _is_none(value):
        return None
    if number is not None and number > 0:
        return number
    raise _refuse(name, value, source, "a positive number of seconds (or none)")


def seconds(name: str, value: object, source: str) -> float:
    """A number of seconds, 0 or more."""
    number = _number(value)
    if number is not None and number >= 0:
        return number
    raise _refuse(name, value, source, "a number of seconds, 0 or more")


def model_spec(name: str, value: object, source: str) -> object:
    """ "provider:model" text; from Python (`%agent config` through `configure`), a chat model."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if not isinstance(value, str) and source == _AGENT_CONFIG:
        return value  # a chat model object, given from Python
    msg = f'{source}: {name} must be "provider:model" text, got {value!r}'
    raise InputError(msg, source=source)


_NOT_KEYWORDS = ("model", "model_provider", "name")
"""Keys the model's name sets, not its keywords."""
_KEYWORD_VALUE = (str, int, float, bool, list, dict)


def model_keywords(name: str, value: object, source: str) -> dict[str, object]:
    """Keyword arguments for the model's constructor (`init_chat_model`): a table of names to
    TOML values (`base_url`, `temperature`, `max_tokens`, `thinking_budget`, ...). Text for one
    keyword (`%agent config model.temperature=0.2`) is read as a TOML value when it is one
    (`0.2`, `true`, `{type = "enabled"}`), else as text; `none` removes the keyword."""
    if not isinstance(value, Mapping):
        raise _refuse(name, value, source, "a table of keyword = value")
    keywords: dict[str, object] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key.isidentifier() or key in _NOT_KEYWORDS:
            msg = (
                f"{source}: {name}: {key!r} is not a keyword for the model; give the model "
                'itself as model = "provider:model" (in a [model] table: name = "provider:model")'
            )
            raise InputError(msg, source=source)
        if isinstance(item, str) and source == _AGENT_CONFIG:
            item = _toml_value(item)
        if item is not None and not isinstance(item, _KEYWORD_VALUE):
            reveal = getattr(item, "get_secret_value", None)  # a SecretStr, given from Python
            if not callable(reveal):
                raise _refuse(
                    f"{name}.{key}", item, source, "text, a number, true/false or a table"
                )
        keywords[key] = item
    return keywords


def _toml_value(text_value: str) -> object:
    """`text_value` read as a TOML value (`0.2`, `true`, `[1, 2]`, `{a = 1}`), else the text
    itself; `none` or nothing: None (the keyword is removed)."""
    if _is_none(text_value):
        return None
    try:
        return tomllib.loads(f"value = {text_value.strip()}")["value"]
    except tomllib.TOMLDecodeError:
        return text_value.strip()


def replay_mode(name: str, value: object, source: str) -> str:
    """The research log's replay mode: auto, strict or off."""
    if isinstance(value, str) and value.strip() in _REPLAY_MODES:
        return value.strip()
    msg = f"{source}: {name} must be auto, strict or off, got {value!r}"
    raise InputError(msg, source=source)


def project_name(name: str, value: object, source: str) -> str:
    """A project's name: text without '/'."""
    if isinstance(value, str) and "/" not in value:
        return value.strip()
    msg = f"{source}: {name} must be a name without '/', got {value!r}"
    raise InputError(msg, source=source)


def variable_name(name: str, value: object, source: str) -> str:
    """A notebook variable that may receive results (see `names.check_variable_name`)."""
    return check_variable_name(text(name, value, source).strip(), f"{source}: {name}")


def database_url(name: str, value: object, source: str) -> str:
    """A checked `postgresql://` URL (or empty); a password only from the environment
    variable."""
    url = check_database_url(text(name, value, source), source)
    if url and source != DATABASE_URL_VARIABLE and database_password(url) is not None:
        msg = (
            f"{source}: {name} {mask_database_url(url)!r} holds a password, which would be "
            "saved with the notebook or its configuration. Give the URL without it and put the "
            f"password in ~/.pgpass or PGPASSWORD, or set the whole URL in {DATABASE_URL_VARIABLE}."
        )
        raise InputError(msg, source=source)
    return url
