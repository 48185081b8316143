"""Searching files: glob patterns, grep's line regexes with a cost bound, and match limits."""
