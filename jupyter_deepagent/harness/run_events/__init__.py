"""Run events: the sink the harness emits typed events into, and the middleware that emits them."""
