"""Where the engine's entry point is, for the commands fixloop tells a person to run."""

from __future__ import annotations

from pathlib import Path

ENGINE = str(Path(__file__).resolve().parents[3] / "fixloop")  # scripts/fixloop


def engine_command(*words: str) -> str:
    """A command line a person can type in a terminal: the engine's path, quoted, then `words`."""
    return " ".join([f'"{ENGINE}"', *words])
