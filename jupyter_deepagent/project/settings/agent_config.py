"""The notebook's defaults for `%%agent`, from five layers (later wins):

1. built-in defaults (`AgentConfig()`),
2. `[tool.jupyter-deepagent]` in the nearest `pyproject.toml` at or above the notebook's folder,
3. `.deepagent.toml` beside the notebook (keys at the top level; the model's keywords in a
   `[model]` table beside its `name`),
4. `%agent config key=value` in this kernel,
5. `JUPYTER_DEEPAGENT_DATABASE_URL` in the environment, for `database_url` only (a JupyterHub sets
   it for everyone; see `database_url`), and `JUPYTER_DEEPAGENT_STATE_DIR` for `state_dir` only
   (`jupyter-deepagent verify` points its dry run at a fresh folder with it).

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
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote, urlsplit

from jupyter_deepagent._exceptions import InputError
from jupyter_deepagent.project.module_shadowing import IMPORTABLE
from jupyter_deepagent.project.settings.coercion import (
    coerced_by,
    coercer_of,
    database_url,
    flag,
    model_keywords,
    model_spec,
    module_names,
    project_name,
    replay_mode,
    seconds,
    seconds_or_none,
    text,
    text_list,
    variable_name,
    whole_number,
    whole_number_or_none,
)
from jupyter_deepagent.project.settings.spending import (
    PriceOverrides,
    budget_limit,
    price_overrides,
)
from jupyter_deepagent.project.settings.subagents import SubagentSetting, check_subagents
from jupyter_deepagent.project.storage.database_url import (
    DATABASE_URL_VARIABLE,
    environment_database_url,
    mask_database_url,
)

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

    from jupyter_deepagent.harness.budget.limit import Budget

__all__ = [
    "CONFIG_FILE_NAMES",
    "DEFAULT_HIDDEN_PATHS",
    "DEFAULT_PROTECTED_MODULES",
    "DEFAULT_PROTECTED_PATHS",
    "STATE_DIR_VARIABLE",
    "AgentConfig",
    "ConfigLayer",
    "coerce_setting",
    "environment_layers",
    "file_layers",
    "is_secret_keyword",
    "model_secrets",
    "resolve_config",
    "shown_value",
]

_SECRET_KEYWORD = re.compile(
    r"(^|_)(key|token|secret|password|passwd|credentials?)$", re.IGNORECASE
)  # api_key, access_token, client_secret; not max_tokens
_LOCAL_CONFIG_FILE = ".deepagent.toml"
_PYPROJECT_TABLE = "jupyter-deepagent"
CONFIG_FILE_NAMES = (_LOCAL_CONFIG_FILE, "pyproject.toml")
"""Files whose settings every run reads; only the user may change them."""
STATE_DIR_VARIABLE = "JUPYTER_DEEPAGENT_STATE_DIR"
"""An environment variable that sets `state_dir` over every other layer (when not empty)."""

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
    # research logs: the kernel writes them and replays what they say as the model's answers
    "*.agentlog.jsonl",
    # JupyterLab's saved checkpoints of each notebook: what "Revert to checkpoint" restores
    ".ipynb_checkpoints",
    # shells, git and tools that run what these files say, without asking
    ".envrc",
    ".direnv",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    # Python tools that run what a file in the current folder says: pdb and IPython's debugger
    # run each line of ./.pdbrc as Python at %debug, breakpoint() or %pdb (pdb++: .pdbrc.py);
    # matplotlib reads ./matplotlibrc, whose `backend: module://name` imports a module
    ".pdbrc*",
    "matplotlibrc",
    # environments inside the workspace (any name: `python -m venv env`): their packages and
    # activation scripts run when the environment is used
    "site-packages",
    "dist-packages",
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
    "simplejson",
    "brotli",
    "brotlicffi",
    "chardet",
    "socks",
    "python_socks",
    "linkify_it",
    "cython",
    "httpx_aiohttp",
    "backports",
    "pytz",
    "aiohttp",
    IMPORTABLE,
)
"""Module names whose files the agent may not write where a kernel starts: what starts a kernel
(`python -m ipykernel_launcher`), what `%load_ext jupyter_deepagent` imports, IPython's own
extensions (`storemagic`, loaded at every kernel start, and `autoreload`: IPython tries `import
storemagic` before `IPython.extensions.storemagic`), LangChain's provider packages (`-m
openai:...` imports `langchain_openai`, installed or not), the optional modules pandas, IPython,
ipykernel, requests, urllib3, httpx and markdown-it try to import when they load (`numexpr`,
`pyarrow`, `simplejson`, `brotli`, `socks`, ...: found in the folder, not installed, they would
run; listed for the imports made before `%load_ext`, which then remembers every miss itself),
and every module of the standard library or an installed package, which a `json.py` or
`numpy/__init__.py` in the notebook's folder would replace at the next kernel start or import."""


@dataclass(frozen=True)
class AgentConfig:
    """Defaults for every `%%agent` cell of a notebook; cell options override them.

    Each field names the coercer that checks its values from files and `%agent config`
    (`coercion`): a new setting is one field here.
    """

    model: str | BaseChatModel = field(
        default="google_genai:gemini-2.5-flash", metadata=coerced_by(model_spec)
    )
    """"provider:model", "scripted:path.yaml" (relative to the notebook), or a chat model."""
    model_settings: Mapping[str, object] = field(
        default_factory=dict, metadata=coerced_by(model_keywords)
    )
    """Keywords for the model's constructor, LangChain's `init_chat_model` (`base_url`,
    `temperature`, `max_tokens`, `thinking_budget`, ...): a `[model]` table beside its `name`, or
    `%agent config model.KEY=VALUE`; each layer adds to the ones below. A scripted model and a
    chat model object take none. Values under a secret-looking name (`api_key`) are masked."""
    system_prompt: str = field(default="", metadata=coerced_by(text))
    """Your standing instructions, placed before the notebook's own."""
    skills: tuple[str, ...] = field(default=(), metadata=coerced_by(text_list))
    """Skills folders; paths not starting with "/" are in /workspace/."""
    memory: tuple[str, ...] = field(default=(), metadata=coerced_by(text_list))
    """AGENTS.md-style memory files, e.g. /memories/AGENTS.md (kept across restarts)."""
    interrupt_on: tuple[str, ...] = field(default=(), metadata=coerced_by(text_list))
    """Tools that wait for your approval (`%agent resume ...`) before they run."""
    context_window: int | None = field(default=None, metadata=coerced_by(whole_number_or_none))
    """The model's context window in tokens; None takes it from the model's profile."""
    state_dir: str = field(default=".deepagent", metadata=coerced_by(text))
    """Where conversations, long-term memory and artifacts are kept, beside the notebook."""
    workspace: str = field(default=".", metadata=coerced_by(text))
    """The folder mounted at /workspace/, relative to the notebook's folder."""
    workspace_read_only: bool = field(default=False, metadata=coerced_by(flag))
    """Refuse writes, edits and deletes in /workspace/."""
    into: str = field(default="agent_results", metadata=coerced_by(variable_name))
    """Variable that receives each run's subagent results (a DataFrame)."""
    env_file: str = field(default=".env", metadata=coerced_by(text))
    """A file of KEY=value lines (API keys) read before a model is created."""
    quiet: bool = field(default=False, metadata=coerced_by(flag))
    """Show only the answer and the /outputs/ files, not the live steps."""
    tools: tuple[str, ...] = field(default=(), metadata=coerced_by(text_list))
    """Notebook functions offered as tools (besides those marked with @agent_tool)."""
    python: bool = field(default=False, metadata=coerced_by(flag))
    """Offer the python tool: the agent runs code in this kernel, in the notebook's namespace."""
    python_approval: bool = field(default=True, metadata=coerced_by(flag))
    """Ask before each python call runs (false: run without asking)."""
    python_timeout: int | None = field(default=60, metadata=coerced_by(whole_number_or_none))
    """Seconds one python call may run before it is stopped (none: no limit)."""
    cells: bool = field(default=False, metadata=coerced_by(flag))
    """Offer the propose_cell tool: the agent proposes code and Markdown cells, shown below the
    agent cell and never run (`%%agent --cells`)."""
    hidden_paths: tuple[str, ...] = field(
        default=DEFAULT_HIDDEN_PATHS, metadata=coerced_by(text_list)
    )
    """Names or paths in /workspace/ the agent can neither see nor change (besides .env*)."""
    protected_paths: tuple[str, ...] = field(
        default=DEFAULT_PROTECTED_PATHS, metadata=coerced_by(text_list)
    )
    """Names or paths in /workspace/ the agent may read but never write, edit or delete."""
    protected_modules: tuple[str, ...] = field(
        default=DEFAULT_PROTECTED_MODULES, metadata=coerced_by(module_names)
    )
    """Modules whose files (`NAME.py`, `.pyc`, `.so`, `NAME/__init__.py`) the agent may read but
    never write, edit or delete at the workspace's top or in the notebook's folder, where a
    kernel finds them first; `NAME*`: every module whose name starts so; `<importable>`: every
    standard-library or installed module."""
    replay: str = field(default="auto", metadata=coerced_by(replay_mode))
    """The research log's replay mode: auto, strict or off (see `jupyter.session.recording`)."""
    model_timeout: float | None = field(default=60.0, metadata=coerced_by(seconds_or_none))
    """Seconds one model call may take before it fails (none: no limit)."""
    model_retries: int = field(default=2, metadata=coerced_by(whole_number))
    """Further attempts after a model call fails with a network error, a timeout, a rate limit
    or a server error; each shows a line in the cell (0: fail at once)."""
    model_retry_wait: float = field(default=2.0, metadata=coerced_by(seconds))
    """Seconds before the first retry; each later wait doubles (2 s, 4 s, ...)."""
    database_url: str = field(default="", metadata=coerced_by(database_url))
    """A postgresql:// URL to keep conversations and /memories/ in a shared PostgreSQL database
    (empty: SQLite files in state_dir). `JUPYTER_DEEPAGENT_DATABASE_URL` wins over the rest."""
    project: str = field(default="", metadata=coerced_by(project_name))
    """The project whose /memories/ its users share (empty: the notebook folder's name)."""
    budget: Budget | None = field(default=None, metadata=coerced_by(budget_limit))
    """What one run may spend: "$0.50" or 0.5 (US dollars), "200k tokens" (for models without a
    price); none: no limit. The run pauses before the model call that would pass it."""
    prices: PriceOverrides = field(default=(), metadata=coerced_by(price_overrides))
    """Overrides of the shipped prices: `[prices."provider:model"]` tables of input,
    cached_input, cache_write, cache_write_1h and output (US dollars per million tokens)."""
    subagents: tuple[SubagentSetting, ...] = field(default=(), metadata=coerced_by(check_subagents))
    """Subagents besides the general-purpose one (`[[subagents]]` tables: name, description,
    system_prompt, skills, interrupt_on, response_format; see `project.settings.subagents`)."""


_FIELDS = {f.name: f for f in dataclasses.fields(AgentConfig)}


@dataclass(frozen=True)
class ConfigLayer:
    """Settings from one source (a file, or `%agent config`), already checked and typed."""

    source: str
    values: Mapping[str, object]


def coerce_setting(name: str, value: object, source: str) -> object:
    """Check one setting and convert it to its type; text (from `%agent config`) is parsed.

    Lists are given as TOML arrays or comma-separated text; booleans as true/false/yes/no.

    Raises:
        InputError: An unknown key or a value of the wrong type; the message names the source.
    """
    if name not in _FIELDS:
        msg = f"{source}: unknown setting {name!r}; known settings: {', '.join(_FIELDS)}"
        raise InputError(msg, source=source)
    return coercer_of(_FIELDS[name])(name, value, source)


def shown_value(name: str, value: object) -> object:
    """A setting's value as it may be shown (the database URL's password and secret-looking
    model keywords masked, subagents by name)."""
    if name == "subagents" and isinstance(value, tuple):
        return tuple(str(spec.get("name")) for spec in value)
    if name == "model_settings" and isinstance(value, Mapping):
        return _masked_keywords(value)
    if name == "prices" and isinstance(value, tuple):
        return tuple(key for key, _ in value)
    if name == "budget" and value is not None:
        return str(value)
    return mask_database_url(value) if name == "database_url" and isinstance(value, str) else value


def is_secret_keyword(name: str) -> bool:
    """Whether a model keyword holds a secret (`api_key`, `access_token`, ...)."""
    return _SECRET_KEYWORD.search(name) is not None


def model_secrets(settings: Mapping[str, object]) -> list[str]:
    """The values of `settings` (model keywords) to keep from the model and every view: those
    under a secret-looking name, every value of a table of headers (`default_headers =
    {Authorization = "Bearer ..."}`) and the password of a URL (`base_url`)."""
    values: list[str] = []
    for key, value in settings.items():
        reveal = getattr(value, "get_secret_value", None)
        shown = reveal() if callable(reveal) else value
        if isinstance(shown, Mapping):
            nested = shown.items() if "header" in key.lower() else ()
            values += [str(v) for _, v in nested]
            values += model_secrets({str(k): v for k, v in shown.items()})
        elif isinstance(shown, str):
            if is_secret_keyword(key):
                values.append(shown)
            password = urlsplit(shown).password if "://" in shown else None
            values += [password, unquote(password)] if password else []
    return [value for value in dict.fromkeys(values) if len(value) >= 4]


def _masked_keywords(settings: Mapping[str, object]) -> dict[str, object]:
    """`settings` as `%agent config` shows them: each secret (`model_secrets`) as ***."""
    secrets = sorted(model_secrets(settings), key=len, reverse=True)

    def masked(value: object) -> object:
        if isinstance(value, Mapping):
            return {k: masked(v) for k, v in value.items()}
        text = str(getattr(value, "get_secret_value", lambda: value)())
        for secret in secrets:
            text = text.replace(secret, "***")
        return text if isinstance(value, str) or text != str(value) else value

    return {k: masked(v) for k, v in settings.items()}


def _layer(source: str, table: Mapping[str, object]) -> ConfigLayer:
    """One file's settings; a `[model]` table is the model's `name` and its keywords."""
    if "model_settings" in table:
        msg = (
            f"{source}: the model's keywords go in a [model] table beside its name: "
            '[model] name = "provider:model", then one keyword per line (temperature = 0.2)'
        )
        raise InputError(msg, source=source)
    model = table.get("model")
    if isinstance(model, Mapping):
        keywords = {k: v for k, v in model.items() if k != "name"}
        table = {k: v for k, v in table.items() if k != "model"}
        table |= {"model_settings": keywords}
        if "name" in model:
            table |= {"model": model["name"]}
    return ConfigLayer(source, {k: coerce_setting(k, v, source) for k, v in table.items()})


def _read_toml(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        msg = f"{path}: cannot read it as TOML: it is not UTF-8 text. Save it as UTF-8."
        raise InputError(msg, source=str(path)) from None
    except OSError as exc:
        msg = f"{path}: cannot read it: {exc.strerror or exc}. Check the file's permissions."
        raise InputError(msg, source=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        msg = f"{path}: cannot read it as TOML: {exc}. Fix the file, or delete it."
        raise InputError(msg, source=str(path)) from None
    except RecursionError:
        msg = f"{path}: cannot read it as TOML: its values are nested too deeply. Fix the file."
        raise InputError(msg, source=str(path)) from None


def _pyproject_table(path: Path) -> Mapping[str, object] | None:
    """The `[tool.jupyter-deepagent]` table of a pyproject.toml, or None if it has none."""
    tool = _read_toml(path).get("tool", {})
    where = f"{path} [tool.{_PYPROJECT_TABLE}]"
    if not isinstance(tool, dict):
        msg = f"{path}: `tool` must be a table ([tool]), got {tool!r}. Fix the file."
        raise InputError(msg, source=str(path))
    table = tool.get(_PYPROJECT_TABLE)
    if table is not None and not isinstance(table, dict):
        msg = f"{where}: must be a table of settings, got {table!r}. Fix the file."
        raise InputError(msg, source=where)
    return table


def file_layers(notebook_dir: Path) -> list[ConfigLayer]:
    """The layers from `pyproject.toml` (nearest at or above `notebook_dir`) and `.deepagent.toml`.

    Raises:
        InputError: A file cannot be read as UTF-8 TOML, or holds an unknown key or a mistyped
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
    local = notebook_dir / _LOCAL_CONFIG_FILE
    if local.is_file():
        layers.append(_layer(_LOCAL_CONFIG_FILE, _read_toml(local)))
    return layers


def environment_layers() -> list[ConfigLayer]:
    """The layers of `JUPYTER_DEEPAGENT_DATABASE_URL` and `JUPYTER_DEEPAGENT_STATE_DIR`, when
    they are set (they win over the others).

    Raises:
        InputError: The database variable is not a postgresql:// URL (the message masks it).
    """
    layers = []
    url = environment_database_url()
    if url is not None:
        layers.append(_layer(DATABASE_URL_VARIABLE, {"database_url": url}))
    state_dir = os.environ.get(STATE_DIR_VARIABLE, "")
    if state_dir:
        layers.append(_layer(STATE_DIR_VARIABLE, {"state_dir": state_dir}))
    return layers


def resolve_config(layers: list[ConfigLayer]) -> tuple[AgentConfig, dict[str, str]]:
    """Apply the layers over the defaults; also say where each setting came from."""
    values: dict[str, Any] = {}
    sources = dict.fromkeys(_FIELDS, "default")
    for layer in layers:
        added = cast("Mapping[str, object]", layer.values.get("model_settings", {}))
        keywords = {**values.get("model_settings", {}), **added}  # each layer adds keywords
        values.update(layer.values)
        values["model_settings"] = {k: v for k, v in keywords.items() if v is not None}
        sources.update(dict.fromkeys(layer.values, layer.source))
    return AgentConfig(**values), sources
