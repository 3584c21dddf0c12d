"""A review run on disk with issues, for the baseline tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers_review import CR, SFH, Loop, issue, make_state
from helpers_runs import FakeClock

from fixloop.runs import creation, lifecycle

SQL = issue("S", 12, "SQL built by string concatenation", category="security", severity="critical")
NULL = issue("N", 30, "Missing null check on `user`")
HANDLE = issue("H", 5, "Unclosed file handle", file="src/db.py")


def reviewed_run(root: Path) -> str:
    """A review run on disk whose round 1 found FL-001 (SQL), FL-002 (NULL) and FL-003 (HANDLE)."""
    run_id: str = creation.start_run("review", root=root, changed_files=["src/app.py"], clock=FakeClock())[
        "state"
    ]["run_id"]
    loop = Loop(make_state(use_verifier=False))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [SQL, NULL], SFH: [HANDLE]})
    loop.next()
    review = loop.state["review"]

    def put(state: dict[str, Any]) -> None:
        state["review"] = review

    lifecycle.store_for(root, run_id).update(put, action="test")
    return run_id
