"""`jupyter-deepagent serve-config`: the two files LangGraph Server needs to serve a notebook
folder's research agent, `langgraph.json` and a small graph module.

The graph module calls `build_served_agent` on the folder, so the served agent reads the same
`.deepagent.toml` as the notebook each time the server starts. Both files are short and meant to
be read and edited (Python-only tools and subagents are added in the module); writing them again refuses to
replace a file that differs from what would be written, unless `force`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from jupyter_deepagent.server.served_agent import GRAPH_MODULE, SERVER_CONFIG_FILE, served_config

__all__ = [
    "GRAPH_NAME",
    "ServeFiles",
    "write_serve_config",
]

GRAPH_NAME = "agent"
"""The graph's name in `langgraph.json`: the assistant id clients run."""


@dataclass(frozen=True)
class ServeFiles:
    """What `write_serve_config` did: the files written, and those already as they should be."""

    written: list[Path]
    unchanged: list[Path]
    env_file: str | None
    """The env file `langgraph.json` names (relative to it), or None when the folder has none."""


def _relative(target: Path, start: Path) -> str:
    """`target` as a POSIX path relative to `start` ("." for the same folder)."""
    return Path(os.path.relpath(target, start)).as_posix()


def _graph_module_text(folder: Path, output: Path, workspace: str | None = None) -> str:
    """The graph module for `folder`, written into `output` (both resolved)."""
    where = _relative(folder, output)
    base = "HERE" if where == "." else f"(HERE / {where!r}).resolve()"
    workspace_arg = f",\n    workspace={workspace!r}," if workspace is not None else ","
    return f'''\
"""The research agent of this notebook folder, for LangGraph Server (`langgraph dev`).

Written by `jupyter-deepagent serve-config`. The agent reads the folder's .deepagent.toml (and
pyproject.toml) when the server starts, as a notebook does at each run: restart the server after
changing them. Add Python-only parts here: tools=[...], or subagents=[...] with a model of
their own (the [[subagents]] of .deepagent.toml are offered already).
"""

from pathlib import Path

from jupyter_deepagent import build_served_agent

HERE = Path(__file__).resolve().parent

graph = build_served_agent(
    {base}{workspace_arg}
)
'''


def _server_config_text(module: str, env_file: str | None) -> str:
    """`langgraph.json`: the graph, its dependencies, and the env file when there is one."""
    config: dict[str, object] = {
        "dependencies": ["."],
        "graphs": {GRAPH_NAME: f"./{module}:graph"},
    }
    if env_file is not None:
        config["env"] = env_file
    return json.dumps(config, indent=2) + "\n"


def write_serve_config(
    folder: str | Path,
    *,
    workspace: str | None = None,
    output: str | Path | None = None,
    force: bool = False,
) -> ServeFiles:
    """Write `langgraph.json` and the graph module for `folder` into `output` (default: the
    folder).

    The folder's configuration is read first, so an invalid `.deepagent.toml` is reported now
    rather than when the server starts.

    Raises:
        ValueError: The folder is missing, its configuration is invalid, the workspace is not a
            folder, or a file to write exists with other content and `force` is not set (nothing
            is written then).
        OSError: A file cannot be written.
    """
    root = Path(folder).resolve()
    if not root.is_dir():
        msg = f"{folder}: no such folder; give the folder of the notebooks (and .deepagent.toml)."
        raise ValueError(msg)
    config = served_config(root)
    chosen = Path(workspace if workspace is not None else config.workspace)
    if not (chosen if chosen.is_absolute() else root / chosen).is_dir():
        msg = f"workspace {str(chosen)!r}: no such folder in {root}. Create it, or choose another."
        raise ValueError(msg)
    target = Path(output).resolve() if output is not None else root
    target.mkdir(parents=True, exist_ok=True)
    env_path = root / config.env_file
    env_file = _relative(env_path, target) if env_path.is_file() else None
    files = {
        target / SERVER_CONFIG_FILE: _server_config_text(GRAPH_MODULE, env_file),
        target / GRAPH_MODULE: _graph_module_text(root, target, workspace),
    }
    unchanged = [p for p, text in files.items() if p.is_file() and _read(p) == text]
    changed = [p for p in files if p.exists() and p not in unchanged]
    if changed and not force:
        names = ", ".join(p.name for p in changed)
        msg = (
            f"{names} in {target} differ from what serve-config writes (edited by hand, or "
            "written with other options); left as they are. Pass --force to replace them."
        )
        raise ValueError(msg)
    written = []
    for path, text in files.items():
        if path not in unchanged:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return ServeFiles(written=written, unchanged=unchanged, env_file=env_file)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
