"""Chat models: resolving a specification (`resolution`), naming one (`label`) and the scripted
offline model (`scripted_model`) with its script format."""

__all__: list[str] = []
