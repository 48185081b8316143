"""The LangGraph Server face: a notebook folder's agent served by `langgraph dev` (no notebook stack)."""
