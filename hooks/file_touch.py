"""PreToolUse / PostToolUse (Edit|Write|MultiEdit|NotebookEdit): what fixloop's agents edit.

Reads Claude Code's hook payload on stdin; for an edit by a fixloop subagent in a session with a running
fixloop run, records the touch in the run's ledger and keeps the file's prior content for a rollback
(fixloop.hookside.file_touch). Never blocks the edit, never prints, always exits 0; a failure leaves a
WARNING.
"""

from __future__ import annotations

import os
import sys

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "scripts", "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)

from fixloop.hookside import context, file_touch  # noqa: E402

if __name__ == "__main__":
    sys.exit(context.run(file_touch.handle, file_touch.relevant))
