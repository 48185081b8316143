"""The agent: tools over backends and middleware for the five kinds of context (no Jupyter)."""
