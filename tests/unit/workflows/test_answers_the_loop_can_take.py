"""File paths and line numbers that used to pass the contract and then jam the run are refused as they are
recorded (the agent is asked again); and whatever the contract takes, the loop can go on with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers_review import issue, reviewer_doc
from helpers_runs import FakeClock
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from workflows.drive_helpers import FIXER, VERIFIER, drive, fixer_answer, fresh_project, verifier_answer
from workflows.flow_helpers import (
    CR,
    FIXED_APP,
    next_action,
    record,
    record_valid,
    review_project,
    start,
    state,
)

from fixloop.contracts.check import check_document
from fixloop.core.agent_names import REVIEWER_AGENTS

# (field, value, the violation's message) of each answer that used to be taken
JAMS = [
    (
        "file",
        "src/a\x00b.py",
        "must not hold control characters such as a NUL byte or a line break (U+0000 at character 6); "
        "got 'src/a\\x00b.py'",
    ),
    (
        "file",
        "src/" + "a" * 4196,
        "must be at most 1024 characters long (it has 4200); got 'src/" + "a" * 53 + "...'",
    ),
    (
        "file",
        "src/a\nb.py",
        "must not hold control characters such as a NUL byte or a line break (U+000A at character 6); "
        "got 'src/a\\nb.py'",
    ),
    (
        "file",
        ".git/config",
        "must not be inside a .git directory (git's own files are not the project's); got '.git/config'",
    ),
    ("line", 2**64, "must be an integer from 1 to 10000000; got 18446744073709551616"),
    ("line", 10**300, "must be an integer from 1 to 10000000; got " + "1" + "0" * 56 + "..."),
]


@pytest.fixture
def project(git_project: Path, fake_clock: FakeClock) -> Path:
    review_project(git_project)
    return git_project


@pytest.mark.parametrize(
    ("field", "value", "message"), JAMS, ids=[f"{f}-{str(v)[:12]!r}" for f, v, _ in JAMS]
)
def test_a_reviewer_answer_that_would_jam_the_run_is_asked_again(
    project: Path, field: str, value: Any, message: str
) -> None:
    run_id = start(project)
    next_action(run_id)
    answer = {"status": "success", "agent": CR, "issues": [issue("CR-1", 1, "Prints instead of logging")]}
    answer["issues"][0][field] = value
    code, refused = record(run_id, CR, json.dumps(answer))
    assert (code, refused["valid"], refused["retry"], refused["error"]["code"]) == (
        1,
        False,
        True,
        "SCHEMA_VIOLATION",
    )
    kind_of_error = "value_error" if field == "file" else "less_than_equal"
    assert refused["error"]["violations"] == [
        {"path": f"$.issues[0].{field}", "message": message, "type": kind_of_error}
    ]
    # asked again, the reviewer answers well, and the run goes on to the verifier
    record_valid(run_id, CR, reviewer_doc(CR, [issue("CR-1", 1, "Prints instead of logging")]))
    for agent in REVIEWER_AGENTS[1:]:
        record_valid(run_id, agent, reviewer_doc(agent))
    assert [call["subagent_type"] for call in next_action(run_id)["calls"]] == [f"fixloop:{VERIFIER}"]


@pytest.mark.parametrize(("where", "path"), [("results", "$.results[0].files[0]"), ("files_modified", None)])
@pytest.mark.parametrize("bad", ["src/a\x00b.py", "src/" + "a" * 4196, "src/a\nb.py", ".git/config"])
def test_a_fixer_answer_that_would_jam_the_run_is_asked_again(
    project: Path, where: str, path: str | None, bad: str
) -> None:
    run_id = start(project)
    next_action(run_id)
    for agent in REVIEWER_AGENTS:
        found = [issue("CR-1", 1, "Prints instead of logging")] if agent == CR else []
        record_valid(run_id, agent, reviewer_doc(agent, found))
    next_action(run_id)
    handed = [{"id": "FL-001", "file": "src/app.py"}]
    record_valid(run_id, VERIFIER, verifier_answer(handed, lambda _id: "src/app.py:1 prints"))
    assert [call["subagent_type"] for call in next_action(run_id)["calls"]] == [f"fixloop:{FIXER}"]
    answer = fixer_answer(handed)
    if where == "results":
        answer["results"][0]["files"] = [bad]
    else:
        answer["files_modified"] = ["src/app.py", bad]
    code, refused = record(run_id, FIXER, json.dumps(answer))
    assert (code, refused["valid"], refused["retry"], refused["error"]["code"]) == (
        1,
        False,
        True,
        "SCHEMA_VIOLATION",
    )
    assert [v["path"] for v in refused["error"]["violations"]] == [path or "$.files_modified[1]"]
    (project / "src" / "app.py").write_text(FIXED_APP)
    record_valid(run_id, FIXER, fixer_answer(handed))
    assert next_action(run_id)["action"] in ("agents", "stop")
    assert state(project, run_id)["errors"] == []


# ---- whatever the contract takes, the loop goes on -----------------------------------------------------

CHARACTERS = [
    "a",
    "é",
    "/",
    ".",
    "..",
    "\\",
    " ",
    "-",
    "_",
    ":",
    "\x00",
    "\n",
    "\t",
    "\x7f",
    "\u2028",
    "~",
    "*",
]
paths = st.one_of(
    st.lists(st.sampled_from(CHARACTERS), min_size=1, max_size=12).map("".join),
    st.sampled_from(
        [".git/config", "sub/.git/HEAD", "./src/app.py", "src\\app.py", "C:/x.py", "/etc/passwd"]
    ),
    st.integers(min_value=1000, max_value=1100).map(lambda n: "d/" * (n // 2)),
)
lines = st.one_of(
    st.integers(min_value=-2, max_value=12),
    st.sampled_from([9_999_999, 10_000_000, 10_000_001, 2**31, 2**63, 2**64, 10**300]),
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(path=paths, line=lines)
@example(path="src/a\x00b.py", line=1)
@example(path="a" * 4200, line=1)
@example(path="src/a\nb.py", line=2**64)
def test_whatever_the_contract_takes_the_loop_can_take(
    path: str, line: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = issue("CR-1", 1, "Prints instead of logging", file=path)
    found["line"] = line
    taken = check_document("reviewer", {"status": "success", "agent": CR, "issues": [found]})
    with fresh_project(monkeypatch) as root:
        review_project(root)
        run_id = start(root)

        def answer(agent: str, handed: list[dict[str, Any]] | None) -> Any:
            if agent == VERIFIER:
                return verifier_answer(handed or [], lambda _id: "seen")
            if agent == FIXER:
                return fixer_answer(handed or [])
            return {"status": "success", "agent": agent, "issues": [found] if agent == CR else []}

        steps = drive(root, run_id, answer)
        refused = [step for step in steps if step.code == 1]
        assert bool(refused) == (not taken.ok)
        assert [step.command for step in steps if step.code not in (0, 1)] == []
        assert steps[-1].command == "next"
        assert steps[-1].output["action"] == "stop"
        assert state(root, run_id)["errors"] == []
        assert steps[-1].output["status"] != "failed"
