"""PreToolUse / PostToolUse / PostToolUseFailure (Agent|Task) and SubagentStart: the record of subagent calls.

Reads Claude Code's hook payload on stdin; for a fixloop subagent of a session with a running fixloop run,
writes the run's ledger and its AGENT_CALL, AGENT_RESULT and REVIEW_PARALLEL_START/END events
(fixloop.hookside.agent_events). Never blocks, never prints, always exits 0; a failure leaves a WARNING.
"""

from __future__ import annotations

import os
import sys

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "scripts", "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)

from fixloop.hookside import agent_events, context  # noqa: E402

if __name__ == "__main__":
    sys.exit(context.run(agent_events.handle, agent_events.relevant))
