"""Can a detected command run here? `fixloop init` approves only the commands that can.

Running a whole test suite to find out would cost minutes, so each simple command of the text is checked
the cheap way: its executable exists (a path in the project, or a name on PATH), `python -m MODULE` finds
the module with that very interpreter, and `npx TOOL` has the project's own `node_modules/.bin/TOOL` (else
npx would download it). The answer is None, or why the command would fail, in a sentence.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from fixloop.runs.command_binding import simple_commands

_FIND_MODULE = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 3)"
_PROBE_TIMEOUT = 60.0  # seconds for the interpreter to start and look the module up


def why_not_runnable(root: Path, command: str) -> str | None:
    """None when every executable of `command` is there; else what is missing."""
    for words in simple_commands(command):
        executable = words[0]
        if "/" in executable:
            path = root / executable
            if not (path.is_file() and os.access(path, os.X_OK)):
                return f"{executable} does not exist in the project"
            resolved = str(path)
        else:
            found = shutil.which(executable)
            if found is None:
                return f"{executable} is not installed (not on PATH)"
            resolved = found
        name = os.path.basename(executable)
        if name.startswith("python") and len(words) > 2 and words[1] == "-m":
            missing = _missing_module(root, resolved, executable, words[2])
            if missing is not None:
                return missing
        if name == "npx" and len(words) > 1 and not words[1].startswith("-"):
            tool = Path("node_modules") / ".bin" / words[1]
            if not (root / tool).exists():
                return (
                    f"{tool} is missing (npx would download {words[1]}): install the project's dependencies"
                )
    return None


def _missing_module(root: Path, resolved: str, python: str, module: str) -> str | None:
    try:
        done = subprocess.run(
            [resolved, "-c", _FIND_MODULE, module],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{python} could not be asked for {module}: {error}"
    if done.returncode == 3:
        return f"{python} has no module named {module}"
    if done.returncode != 0:
        return f"{python} could not be asked for {module} (exit code {done.returncode})"
    return None
