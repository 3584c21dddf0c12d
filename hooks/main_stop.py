"""Stop (the main thread): a run bound to this session is not over while it still needs agents.

Reads Claude Code's hook payload on stdin; when the session's run is running, needs agents and none of its
agents is at work, prints {"decision":"block","reason":...} with the engine's step (fixloop.hookside.hold),
boundedly. Any error ends in exit 0 without output and a WARNING.
"""

from __future__ import annotations

import os
import sys

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "scripts", "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)

from fixloop.hookside import context, stop  # noqa: E402

if __name__ == "__main__":
    sys.exit(context.run(stop.main_stop, stop.is_main_stop))
