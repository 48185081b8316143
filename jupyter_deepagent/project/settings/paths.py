"""Paths the settings give, in the agent's filesystem."""

from __future__ import annotations

__all__ = ["virtual_path"]


def virtual_path(path: str) -> str:
    """A skills or memory path of the configuration in the agent's filesystem: a relative path
    is in /workspace/."""
    from jupyter_deepagent.backends import normalize_virtual_path

    return normalize_virtual_path(path if path.startswith("/") else "/workspace/" + path)
