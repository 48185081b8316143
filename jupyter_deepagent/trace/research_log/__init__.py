"""The research log: every model call of a notebook recorded beside it, replayed offline."""
