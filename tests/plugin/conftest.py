"""The plugin tests import the engine from scripts/lib, like the unit tests."""

from __future__ import annotations

import sys
from pathlib import Path

LIB = Path(__file__).resolve().parents[2] / "scripts" / "lib"
if str(LIB) not in sys.path:
    sys.path.insert(0, str(LIB))
