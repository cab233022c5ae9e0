"""maps (filled in by its issue)."""

__all__: list[str] = []
