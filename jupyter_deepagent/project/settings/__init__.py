"""Settings: the `AgentConfig` resolved from TOML files, `%agent config` and the environment."""
