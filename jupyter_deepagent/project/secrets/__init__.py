"""Secrets: masking by value and by pattern, env files and API keys, masked views of files."""
