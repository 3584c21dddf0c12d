"""SessionStart: cache this interpreter for hooks/run-hook, start building the engine's environment in the
background when it is missing or stale, and export the data directory to the Bash tool
(fixloop.hookside.session). Prints nothing; always exits 0.
"""

from __future__ import annotations

import os
import sys

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "scripts")
for path in (SCRIPTS, os.path.join(SCRIPTS, "lib")):
    if path not in sys.path:
        sys.path.insert(0, path)

import bootstrap  # noqa: E402

from fixloop.core.build_backoff import backoff_left  # noqa: E402
from fixloop.hookside import session  # noqa: E402


def environment_fresh(data: str) -> bool:
    """Fresh, or not to be built now: a build that failed a short while ago is not retried every session."""
    directory = bootstrap.data_dir(data)
    if bootstrap.is_fresh(directory):
        return True
    try:
        return backoff_left(directory, bootstrap.requirements_hash())[0] > 0
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(session.session_start(environment_fresh, bootstrap.MIN_PYTHON))
