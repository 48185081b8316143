"""LangChain tools the agent calls."""
