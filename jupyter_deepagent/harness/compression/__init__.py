"""Context compression: keeping every request inside the window without losing anything, and
keeping its prefix the same from one request to the next, which the providers bill at a fraction.

Tokens are counted (`tokens`); large tool results are offloaded to files as they arrive, and
consumed results, long user messages and old file-writing arguments are sent as pointers
(`offload`, `view`, `view_entries`); which results age, in batches, is `aging`; where an Anthropic
request gets its cache breakpoints is `cache_marks`; old history is summarized near the window's
limit or once it is long (`summarize`, `history`), on a provider's overflow error (`overflow`) or
when the agent asks (`compact_tool`). `state` is the checkpointed record of these decisions and
`middleware` drives it.
"""

__all__: list[str] = []
