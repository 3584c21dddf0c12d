"""SubagentStop: hold fixloop's reviewers, fixer and verifier to their output contracts.

Reads Claude Code's hook payload on stdin; for a fixloop subagent of a session with a running fixloop run,
records its final answer into the run and prints {"decision":"block","reason":...} when the answer breaks
its contract and may be retried (fixloop.hookside.stop). Any error ends in exit 0 without output and a
WARNING.
"""

from __future__ import annotations

import os
import sys

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "scripts", "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)

from fixloop.hookside import context, stop  # noqa: E402

if __name__ == "__main__":
    sys.exit(context.run(stop.handle, stop.relevant))
