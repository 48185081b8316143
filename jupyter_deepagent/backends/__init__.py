"""Where bytes live: one protocol and its implementations (no LLM, no Jupyter)."""
