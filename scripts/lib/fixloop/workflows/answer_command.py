"""`/fixloop:answer [RUN] LABEL`: the user's answer to the question a run waits on, from the words typed.

`default` as the label takes the question's default. Without RUN, the run of this Claude Code session; with
RUN, that run, which then goes on in this session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id
from fixloop.runs.command_start import take_prompt
from fixloop.runs.lifecycle import SESSION_ENV, Clock, current_run_id
from fixloop.store.layout import bind_session
from fixloop.workflows.driver import answer

COMMAND = "/fixloop:answer"


def answer_from_prompt(
    root: Path, environ: Mapping[str, str] | None = None, clock: Clock | None = None
) -> dict[str, Any]:
    env = os.environ if environ is None else environ
    session = env.get(SESSION_ENV, "")
    if not session:
        raise FixloopError(
            "NO_SESSION", f"fixloop answer runs inside a Claude Code command (${SESSION_ENV} is not set)."
        )
    typed = take_prompt(root, session).strip()
    if not typed.startswith(COMMAND):
        raise FixloopError("PROMPT_MISMATCH", "The prompt stored for this session is not /fixloop:answer.")
    words = typed[len(COMMAND) :].split()
    if len(words) == 2:
        run_id, label = check_run_id(words[0]), words[1]
    elif len(words) == 1:
        run_id, label = current_run_id(root, session), words[0]
    else:
        raise FixloopError(
            "MISSING_CHOICE",
            "Say which answer: /fixloop:answer [RUN] LABEL (or `default`).",
            received=" ".join(words),
        )
    use_default = label == "default"
    answered = answer(root, run_id, None if use_default else label, use_default, clock)
    # Answered from another session: the run goes on in this one, so its hooks must find the run here.
    bind_session(root, session, run_id)
    return answered
