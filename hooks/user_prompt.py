"""UserPromptSubmit: keep a `/fixloop:` prompt for the engine in
.claude/fixloop/sessions/<session_id>.prompt (fixloop.hookside.prompt). hooks/run-hook starts no
interpreter for any other prompt. Prints nothing; always exits 0; a failure leaves a WARNING.
"""

from __future__ import annotations

import os
import sys

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "scripts", "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)

from fixloop.hookside import prompt  # noqa: E402

if __name__ == "__main__":
    sys.exit(prompt.main())
