"""Input context: the system prompt as ordered, named sections (custom prompt, base prompt, memory,
skills, tool and subagent prompts, profile), and the middleware that sends exactly that prompt."""

__all__: list[str] = []
