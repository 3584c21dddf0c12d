"""Which modules a piece of engine code loads, run in a fresh interpreter started as the hooks start one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LIB = Path(__file__).resolve().parents[2] / "scripts" / "lib"


def modules_loaded_by(code: str, watched: tuple[str, ...]) -> list[str]:
    """Run `code` under `python -E -S` with the engine's modules importable; the `watched` modules it
    loaded (an assertion error in `code` fails the call)."""
    setup = f"import sys\nsys.path.insert(0, {str(LIB)!r})\n"
    report = f"\nprint(*[m for m in {watched!r} if m in sys.modules])\n"
    done = subprocess.run(
        [sys.executable, "-E", "-S", "-c", setup + code + report], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()
