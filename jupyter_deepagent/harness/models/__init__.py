"""Chat models: resolving a specification (`resolution`), naming one (`label`), the timeout and
retries of every call (`call_policy`, `retry`) and the scripted offline model (`scripted_model`)
with its script format."""

__all__: list[str] = []
