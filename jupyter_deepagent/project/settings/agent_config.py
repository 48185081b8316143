"""The notebook's defaults for `%%agent`, from four layers (later wins):

1. built-in defaults (`AgentConfig()`),
2. `[tool.jupyter-deepagent]` in the nearest `pyproject.toml` at or above the notebook's folder,
3. `.deepagent.toml` beside the notebook (keys at the top level),
4. `%agent config key=value` in this kernel,
5. `JUPYTER_DEEPAGENT_DATABASE_URL` in the environment, for `database_url` only (a JupyterHub sets
   it for everyone; see `database_url`).

`database_url` is a secret: a password in it is refused everywhere but the environment variable
(a notebook and its configuration files end up in version control; libpq also reads passwords
from `~/.pgpass` and `PGPASSWORD`), and its value is shown only masked.

The files are re-read at every run, so an edit takes effect without restarting the kernel. The
agent cannot change them: `/workspace/` refuses writes to `.deepagent.toml` and `pyproject.toml`
anywhere in it. Values from files are checked exactly like `%agent config` values.

`hidden_paths` and `protected_paths` list names (`.git`, `*.pth`: any file or folder of that name,
at any depth) or paths from the workspace's top (`tools/deploy.sh`), compared without regard to
case; a folder covers everything under it. `protected_modules` lists module names whose files
(`json.py`, `numpy/__init__.py`) the agent may not write where a kernel starts (see
`module_shadowing`).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_deepagent.project.names import check_variable_name
from jupyter_deepagent.project.storage.database_url import (
    DATABASE_URL_VARIABLE,
    check_database_url,
    database_password,
    environment_database_url,
    mask_database_url,
)

__all__ = [
    "CONFIG_FILE_NAMES",
    "DEFAULT_HIDDEN_PATHS",
    "DEFAULT_PROTECTED_MODULES",
    "DEFAULT_PROTECTED_PATHS",
    "IMPORTABLE",
    "LOCAL_CONFIG_FILE",
    "AgentConfig",
    "ConfigLayer",
    "coerce_setting",
    "environment_layers",
    "file_layers",
    "resolve_config",
    "shown_value",
    "virtual_path",
]

LOCAL_CONFIG_FILE = ".deepagent.toml"
_PYPROJECT_TABLE = "jupyter-deepagent"
CONFIG_FILE_NAMES = (LOCAL_CONFIG_FILE, "pyproject.toml")
"""Files whose settings every run reads; only the user may change them."""

DEFAULT_HIDDEN_PATHS = (
    # version-control internals: a write to `.git/config` or `.git/hooks/` runs a command at
    # the user's next `git status` or `git commit`
    ".git",
    ".hg",
    ".svn",
    # credentials that sit in a home folder, which on a JupyterHub is the notebook's folder:
    # libpq's password and service files (where For teams puts the database password), and
    # the usual stores of other services' keys
    ".pgpass",
    "pgpass.conf",
    ".pg_service.conf",
    ".netrc",
    ".git-credentials",
    ".ssh",
    ".aws",
    ".gnupg",
)
"""Hidden from the agent (and so never changed by it)."""

DEFAULT_PROTECTED_PATHS = (
    # Python and Jupyter start-up: run when a kernel or an interpreter starts
    ".ipython",
    ".jupyter",
    ".venv",
    "venv",
    ".local",
    "sitecustomize*",  # .py, .pyc, a package: imported by every interpreter that starts
    "usercustomize*",
    "*.pth",
    "__pycache__",  # compiled modules, loaded in place of their source
    # shells, git and tools that run what these files say, without asking
    ".envrc",
    ".direnv",
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".config",
    ".ssh",
    ".gitconfig",
    ".gitattributes",
    ".gitmodules",
    ".pre-commit-config.yaml",
    # editors and CI: tasks, extensions and workflows that run on open or on push
    ".vscode",
    ".idea",
    ".github",
)
"""Places where a write becomes code that runs without the user reading it: readable, but the
agent never writes, edits or deletes there."""

IMPORTABLE = "<importable>"
"""In `protected_modules`: every top-level module Python finds outside the workspace (the
standard library and installed packages)."""

DEFAULT_PROTECTED_MODULES = (
    "ipykernel_launcher",
    "jupyter_deepagent",
    "storemagic",
    "autoreload",
    "langchain_*",
    "numexpr",
    "bottleneck",
    "pyarrow",
    "numba",
    "colorama",
    "msgpack",
    "appnope",
    IMPORTABLE,
)
"""Module names whose files the agent may not write where a kernel starts: what starts a kernel
(`python -m ipykernel_launcher`), what `%load_ext jupyter_deepagent` imports, IPython's own
extensions (`storemagic`, loaded at every kernel start, and `autoreload`: IPython tries `import
storemagic` before `IPython.extensions.storemagic`), LangChain's provider packages (`-m
openai:...` imports `langchain_openai`, installed or not), the optional modules pandas, IPython
and ipykernel try to import when they load (`numexpr`, `bottleneck`, `pyarrow`, ...: found in the
folder, not installed, they would run), and every module of the standard library or
an installed package, which a `json.py` or `numpy/__init__.py` in the notebook's folder would
replace at the next kernel start or import."""


@dataclass(frozen=True)
class AgentConfig:
    """Defaults for every `%%agent` cell of a notebook; cell options override them."""

    model: Any = "google_genai:gemini-2.5-flash"
    """"provider:model", "scripted:path.yaml" (relative to the notebook), or a chat model."""
    system_prompt: str = ""
    """Your standing instructions, placed before the notebook's own."""
    skills: tuple[str, ...] = ()
    """Skills folders; paths not starting with "/" are in /workspace/."""
    memory: tuple[str, ...] = ()
    """AGENTS.md-style memory files, e.g. /memories/AGENTS.md (kept across restarts)."""
    interrupt_on: tuple[str, ...] = ()
    """Tools that wait for your approval (`%agent resume ...`) before they run."""
    context_window: int | None = None
    """The model's context window in tokens; None takes it from the model's profile."""
    state_dir: str = ".deepagent"
    """Where conversations, long-term memory and artifacts are kept, beside the notebook."""
    workspace: str = "."
    """The folder mounted at /workspace/, relative to the notebook's folder."""
    workspace_read_only: bool = False
    """Refuse writes, edits and deletes in /workspace/."""
    into: str = "agent_results"
    """Variable that receives each run's subagent results (a DataFrame)."""
    env_file: str = ".env"
    """A file of KEY=value lines (API keys) read before a model is created."""
    quiet: bool = False
    """Show only the answer and the /outputs/ files, not the live steps."""
    tools: tuple[str, ...] = ()
    """Notebook functions offered as tools (besides those marked with @agent_tool)."""
    python: bool = False
    """Offer the python tool: the agent runs code in this kernel, in the notebook's namespace."""
    python_approval: bool = True
    """Ask before each python call runs (false: run without asking)."""
    python_timeout: int | None = 60
    """Seconds one python call may run before it is stopped (none: no limit)."""
    hidden_paths: tuple[str, ...] = DEFAULT_HIDDEN_PATHS
    """Names or paths in /workspace/ the agent can neither see nor change (besides .env*)."""
    protected_paths: tuple[str, ...] = DEFAULT_PROTECTED_PATHS
    """Names or paths in /workspace/ the agent may read but never write, edit or delete."""
    protected_modules: tuple[str, ...] = DEFAULT_PROTECTED_MODULES
    """Modules whose files (`NAME.py`, `.pyc`, `.so`, `NAME/__init__.py`) the agent may read but
    never write, edit or delete at the workspace's top or in the notebook's folder, where a
    kernel finds them first; `NAME*`: every module whose name starts so; `<importable>`: every
    standard-library or installed module."""
    replay: str = "auto"
    """The research log's replay mode: auto, strict or off (see `jupyter.recording`)."""
    model_timeout: float | None = 60.0
    """Seconds one model call may take before it fails (none: no limit)."""
    model_retries: int = 2
    """Further attempts after a model call fails with a network error, a timeout, a rate limit
    or a server error; each shows a line in the cell (0: fail at once)."""
    model_retry_wait: float = 2.0
    """Seconds before the first retry; each later wait doubles (2 s, 4 s, ...)."""
    database_url: str = ""
    """A postgresql:// URL to keep conversations and /memories/ in a shared PostgreSQL database
    (empty: SQLite files in state_dir). `JUPYTER_DEEPAGENT_DATABASE_URL` wins over the rest."""
    project: str = ""
    """The project whose /memories/ its users share (empty: the notebook folder's name)."""
    subagents: tuple[dict[str, Any], ...] = ()
    """Subagents besides the general-purpose one (`[[subagents]]` tables: name, description,
    system_prompt, skills, interrupt_on, response_format; see `jupyter.subagent_settings`)."""


_FIELDS = {f.name: f for f in dataclasses.fields(AgentConfig)}
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@dataclass(frozen=True)
class ConfigLayer:
    """Settings from one source (a file, or `%agent config`), already checked and typed."""

    source: str
    values: Mapping[str, Any]


def _kind(name: str) -> str:
    default = _FIELDS[name].default
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, tuple):
        return "list"
    if name in ("context_window", "python_timeout"):
        return "int"
    if name == "model":
        return "model"
    if name in ("model_timeout", "model_retry_wait"):
        return "seconds"
    if name == "model_retries":
        return "count"
    return "str"


def coerce_setting(name: str, value: Any, source: str) -> Any:
    """Check one setting and convert it to its type; text (from `%agent config`) is parsed.

    Lists are given as TOML arrays or comma-separated text; booleans as true/false/yes/no.

    Raises:
        ValueError: An unknown key or a value of the wrong type; the message names the source.
    """
    if name not in _FIELDS:
        msg = f"{source}: unknown setting {name!r}; known settings: {', '.join(_FIELDS)}"
        raise ValueError(msg)
    kind = _kind(name)
    if kind == "model":
        if isinstance(value, str) and value.strip():
            return value.strip()
        if not isinstance(value, str) and source == "%agent config":
            return value  # a chat model object, given from Python
        msg = f'{source}: model must be "provider:model" text, got {value!r}'
        raise ValueError(msg)
    if name == "replay" and isinstance(value, str) and value.strip() in ("auto", "strict", "off"):
        return value.strip()
    if name == "replay":
        msg = f"{source}: replay must be auto, strict or off, got {value!r}"
        raise ValueError(msg)
    if name == "database_url" and isinstance(value, str):
        return _database_url(value, source)
    if name == "project" and isinstance(value, str) and "/" not in value:
        return value.strip()
    if name == "project":
        msg = f"{source}: project must be a name without '/', got {value!r}"
        raise ValueError(msg)
    if name == "subagents":
        from jupyter_deepagent.project.settings.subagents import check_subagents

        return check_subagents(value, source)
    if name == "into" and isinstance(value, str):
        return check_variable_name(value.strip(), f"{source}: into")
    if kind == "list":
        if isinstance(value, str):
            return _checked_list(
                name, tuple(p.strip() for p in value.split(",") if p.strip()), source
            )
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return _checked_list(name, tuple(value), source)
    elif kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
    elif kind == "int":
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
            return None
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    elif kind == "seconds":
        number = _number(value)
        if number is None and name == "model_timeout" and _is_none(value):
            return None
        if number is not None and (number > 0 or (number == 0 and name != "model_timeout")):
            return number
    elif kind == "count":
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    elif isinstance(value, str):
        return value
    expected = {
        "list": "a list of strings (or comma-separated text)",
        "bool": "true or false",
        "int": "a positive whole number (or none)",
        "seconds": "a positive number of seconds (or none)"
        if name == "model_timeout"
        else "a number of seconds, 0 or more",
        "count": "a whole number, 0 or more",
        "str": "text",
    }[kind]
    msg = f"{source}: {name} must be {expected}, got {value!r}"
    raise ValueError(msg)


def _checked_list(name: str, values: tuple[str, ...], source: str) -> tuple[str, ...]:
    """`values`, with the entries of `protected_modules` checked to be module names."""
    if name != "protected_modules":
        return values
    for value in values:
        name_part = value[:-1] if value.endswith("*") else value
        if value != IMPORTABLE and not name_part.isidentifier():
            msg = (
                f"{source}: protected_modules takes top-level module names such as json or "
                f"numpy, a name's start followed by * (langchain_*), and {IMPORTABLE} for every "
                f"standard or installed one; not {value!r}"
            )
            raise ValueError(msg)
    return values


def _database_url(value: str, source: str) -> str:
    """A checked `database_url`; a password only from the environment variable."""
    url = check_database_url(value, source)
    if url and source != DATABASE_URL_VARIABLE and database_password(url) is not None:
        msg = (
            f"{source}: database_url {mask_database_url(url)!r} holds a password, which would be "
            "saved with the notebook or its configuration. Give the URL without it and put the "
            f"password in ~/.pgpass or PGPASSWORD, or set the whole URL in {DATABASE_URL_VARIABLE}."
        )
        raise ValueError(msg)
    return url


def virtual_path(path: str) -> str:
    """A skills or memory path of the configuration in the agent's filesystem: a relative path
    is in /workspace/."""
    from jupyter_deepagent.backends import normalize_virtual_path

    return normalize_virtual_path(path if path.startswith("/") else "/workspace/" + path)


def shown_value(name: str, value: Any) -> Any:
    """A setting's value as it may be shown (the database URL's password masked, subagents by
    name)."""
    if name == "subagents":
        return tuple(str(spec.get("name")) for spec in value)
    return mask_database_url(value) if name == "database_url" and isinstance(value, str) else value


def _is_none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))


def _number(value: Any) -> float | None:
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


def _layer(source: str, table: Mapping[str, Any]) -> ConfigLayer:
    return ConfigLayer(source, {k: coerce_setting(k, v, source) for k, v in table.items()})


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        msg = f"{path}: cannot read it as TOML: it is not UTF-8 text. Save it as UTF-8."
        raise ValueError(msg) from None
    except OSError as exc:
        msg = f"{path}: cannot read it: {exc.strerror or exc}. Check the file's permissions."
        raise ValueError(msg) from None
    except tomllib.TOMLDecodeError as exc:
        msg = f"{path}: cannot read it as TOML: {exc}. Fix the file, or delete it."
        raise ValueError(msg) from None
    except RecursionError:
        msg = f"{path}: cannot read it as TOML: its values are nested too deeply. Fix the file."
        raise ValueError(msg) from None


def _pyproject_table(path: Path) -> Mapping[str, Any] | None:
    """The `[tool.jupyter-deepagent]` table of a pyproject.toml, or None if it has none."""
    tool = _read_toml(path).get("tool", {})
    where = f"{path} [tool.{_PYPROJECT_TABLE}]"
    if not isinstance(tool, dict):
        msg = f"{path}: `tool` must be a table ([tool]), got {tool!r}. Fix the file."
        raise ValueError(msg)
    table = tool.get(_PYPROJECT_TABLE)
    if table is not None and not isinstance(table, dict):
        msg = f"{where}: must be a table of settings, got {table!r}. Fix the file."
        raise ValueError(msg)
    return table


def file_layers(notebook_dir: Path) -> list[ConfigLayer]:
    """The layers from `pyproject.toml` (nearest at or above `notebook_dir`) and `.deepagent.toml`.

    Raises:
        ValueError: A file cannot be read as UTF-8 TOML, or holds an unknown key or a mistyped
            value; the message names the file.
    """
    layers = []
    for folder in (notebook_dir, *notebook_dir.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            table = _pyproject_table(pyproject)
            if table:
                layers.append(_layer(f"pyproject.toml [tool.{_PYPROJECT_TABLE}]", table))
            break
    local = notebook_dir / LOCAL_CONFIG_FILE
    if local.is_file():
        layers.append(_layer(LOCAL_CONFIG_FILE, _read_toml(local)))
    return layers


def environment_layers() -> list[ConfigLayer]:
    """The layer of `JUPYTER_DEEPAGENT_DATABASE_URL`, when it is set (it wins over the others).

    Raises:
        ValueError: The variable is not a postgresql:// URL (the message masks it).
    """
    url = environment_database_url()
    if url is None:
        return []
    return [_layer(DATABASE_URL_VARIABLE, {"database_url": url})]


def resolve_config(layers: list[ConfigLayer]) -> tuple[AgentConfig, dict[str, str]]:
    """Apply the layers over the defaults; also say where each setting came from."""
    values: dict[str, Any] = {}
    sources = dict.fromkeys(_FIELDS, "default")
    for layer in layers:
        values.update(layer.values)
        sources.update(dict.fromkeys(layer.values, layer.source))
    return AgentConfig(**values), sources
