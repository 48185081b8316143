"""Context compression: keeping every request inside the window without losing anything.

Tokens are counted (`tokens`); large tool results are offloaded to files as they arrive
(`offload`, `result_offload`); consumed results and old file-writing arguments are sent as
pointers (`view`, `input_offload`); old history is summarized near the window's limit
(`summarize`, `history`), on a provider's overflow error (`overflow`) or when the agent asks
(`compact_tool`). `state` is the checkpointed record of these decisions and `middleware` drives it.
"""

__all__: list[str] = []
