"""The logic of fixloop's Claude Code hooks; `hooks/*.py` are thin adapters that call it.

Imports only fixloop.core and fixloop.store, and of the standard library only what loads in well under a
millisecond (no typing, pathlib, json or re at run time): the hooks start on every fixloop subagent call,
with `python -E -S`.
"""

from __future__ import annotations

import os

# scripts/lib/fixloop/hookside/__init__.py -> the plugin's directory (agents/, scripts/fixloop)
PLUGIN_ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
)
