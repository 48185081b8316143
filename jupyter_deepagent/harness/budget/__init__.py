"""The run's budget: a limit in money or tokens, the ledger every model call of the run counts
against (main agent, subagents, summarizer), and the middleware that pauses a run before the call
that would pass it."""
