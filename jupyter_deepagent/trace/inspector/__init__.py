"""The context inspector: a snapshot of a run built from its events, and its static HTML views."""
