"""The plugin's data directory: where the engine's environment, the interpreter cache and the warnings that
belong to no run live. `hooks/run-hook` spells the same rule in one shell line; `scripts/fixloop` follows it
too, except that from a terminal (neither variable set) it first looks for the installed plugin's own data
directory (the one Claude Code will give it, even before its first session), and it exports what it chose
as FIXLOOP_DATA for the engine.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# Hooks get CLAUDE_PLUGIN_DATA; the Bash tool does not, so SessionStart exports FIXLOOP_DATA for it.
DATA_ENV = ("CLAUDE_PLUGIN_DATA", "FIXLOOP_DATA")


def data_dir(environ: Mapping[str, str] | None = None) -> str:
    """$CLAUDE_PLUGIN_DATA, else $FIXLOOP_DATA, else $HOME/.cache/fixloop (/tmp/.cache/fixloop without
    HOME); an empty variable counts as unset, as `${VAR:-...}` does in the shell."""
    env = os.environ if environ is None else environ
    for name in DATA_ENV:
        value = env.get(name)
        if value:
            return value
    return os.path.join(env.get("HOME") or "/tmp", ".cache", "fixloop")
