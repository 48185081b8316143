"""Isolation: the `task` tool delegates work to subagents that run in fresh contexts.

`specs` (what may be delegated), `task_tool` (the tool and its middleware), `run` (one task from
start to finish), `transcript` (the subagent's conversation as Markdown), `outcome` (its report,
structured response and files).
"""

__all__: list[str] = []
