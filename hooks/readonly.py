"""PreToolUse (Bash): a fixloop agent that only reads is held to read-only commands.

Reads Claude Code's hook payload on stdin and prints a PreToolUse denial for a reading agent's command
that could write or run anything else (fixloop.hookside.readonly); prints nothing otherwise.
"""

from __future__ import annotations

import os
import sys

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "scripts", "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)

from fixloop.hookside import readonly  # noqa: E402

if __name__ == "__main__":
    sys.stdout.write(readonly.main(sys.stdin.read()))
