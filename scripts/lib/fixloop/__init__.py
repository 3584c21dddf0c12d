"""fixloop: the engine behind the fixloop Claude Code plugin."""

__version__ = "0.1.0"
