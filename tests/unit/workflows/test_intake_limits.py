"""`fixloop record` of hostile answers up to the 64 MB input limit: each is refused with the right error, by a
process held to 1 GB of address space (it used to need gigabytes, and minutes)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers_review import issue
from helpers_runs import LIB, FakeClock
from workflows.flow_helpers import CR, next_action, record, review_project, start

from fixloop.contracts.extract import MAX_INPUT_BYTES
from fixloop.contracts.jsontext import TOO_MANY_OBJECTS

MEMORY_LIMIT = 1024**3
SIXTY_FOUR_MB = 64 * 1024 * 1024
HEAD = '{"status": "success", "agent": "code-reviewer", '
BAD_ISSUE = '{"id": 1, "severity": 2, "confidence": "x", "file": 3, "line": "y", "description": 5}'


def repeated(item: str, size: int, head: str = HEAD + '"issues": [', tail: str = "]}") -> bytes:
    return (head + ", ".join([item] * ((size - len(head) - len(tail)) // (len(item) + 2))) + tail).encode()


def record_in_a_small_process(
    root: Path, run_id: str, agent: str, answer: bytes
) -> tuple[int, dict[str, object]]:
    """`python -m fixloop record RUN --agent AGENT -` with `answer` on its standard input, under RLIMIT_AS."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "record", run_id, "--agent", agent, "-"],
        input=answer,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(LIB)},
        capture_output=True,
        preexec_fn=limit_memory,
        timeout=120,
        check=False,
    )
    assert b"Traceback" not in done.stderr, done.stderr[-2000:]
    recorded: dict[str, object] = json.loads(done.stdout)
    return done.returncode, recorded


@pytest.fixture
def project(git_project: Path, fake_clock: FakeClock) -> Path:
    review_project(git_project)
    return git_project


Shape = Callable[[int], bytes]
OVER_THE_LIMIT: dict[str, Shape] = {
    "empty issues": lambda size: repeated("{}", size),
    "deep nesting": lambda size: (
        HEAD + '"issues": ' + "[" * (size // 2 - 40) + "]" * (size // 2 - 40) + "}"
    ).encode(),
    "one huge string": lambda size: (
        HEAD + '"positive_observations": ["' + "x" * (size - 100) + '"]}'
    ).encode(),
    "many violations": lambda size: repeated(BAD_ISSUE, size),
}


@pytest.mark.parametrize("shape", list(OVER_THE_LIMIT))
def test_sixty_four_megabytes_are_refused_unread(project: Path, shape: str) -> None:
    run_id = start(project)
    next_action(run_id)
    answer = OVER_THE_LIMIT[shape](SIXTY_FOUR_MB)
    assert MAX_INPUT_BYTES < len(answer) <= SIXTY_FOUR_MB
    code, recorded = record_in_a_small_process(project, run_id, CR, answer)
    error = recorded["error"]
    assert isinstance(error, dict)
    assert (code, recorded["valid"], recorded["retry"], error["code"]) == (1, False, True, "JSON_PARSE_ERROR")
    assert error["parse_error"] == (
        f"input is {len(answer)} bytes, over the {MAX_INPUT_BYTES}-byte limit: not searched for JSON"
    )


FOUR_MB = MAX_INPUT_BYTES - 16
JUST_UNDER: list[tuple[str, bytes, str, list[str]]] = [
    ("empty issues", repeated("{}", FOUR_MB), "JSON_PARSE_ERROR", []),
    ("empty arrays", repeated("[]", FOUR_MB), "JSON_PARSE_ERROR", []),
    (
        "many violations",
        repeated(BAD_ISSUE, FOUR_MB),
        "SCHEMA_VIOLATION",
        [f"$.issues has {FOUR_MB // (len(BAD_ISSUE) + 2) - 1} issues"],
    ),
    (
        "one huge string",
        (HEAD + '"positive_observations": ["' + "x" * (FOUR_MB - 100) + '"]}').encode(),
        "SCHEMA_VIOLATION",
        [f"$.positive_observations[0] is {FOUR_MB - 100} characters long"],
    ),
]


@pytest.mark.parametrize(("shape", "answer", "code", "listed"), JUST_UNDER, ids=[c[0] for c in JUST_UNDER])
def test_answers_just_under_the_limit_are_refused_early(
    project: Path, shape: str, answer: bytes, code: str, listed: list[str]
) -> None:
    run_id = start(project)
    next_action(run_id)
    assert len(answer) <= MAX_INPUT_BYTES
    exit_code, recorded = record_in_a_small_process(project, run_id, CR, answer)
    error = recorded["error"]
    assert isinstance(error, dict)
    assert (exit_code, recorded["valid"], error["code"]) == (1, False, code)
    if code == "JSON_PARSE_ERROR":
        assert error["parse_error"] == TOO_MANY_OBJECTS
    else:
        shown = [f"{v['path']} {v['message']}" for v in error["violations"]]
        assert [line[: len(prefix)] for line, prefix in zip(shown, listed, strict=True)] == listed
        assert error["violation_count"] == 1


def test_the_projects_max_issues_per_answer_bounds_a_reviewers_answer(git_project: Path) -> None:
    review_project(git_project, max_issues_per_answer=2)
    run_id = start(git_project)
    next_action(run_id)
    issues = [issue(f"CR-{n}", n, f"finding {n}") for n in (1, 2, 3)]
    code, refused = record(run_id, CR, json.dumps({"status": "success", "agent": CR, "issues": issues}))
    assert (code, refused["valid"], refused["retry"]) == (1, False, True)
    assert refused["error"]["violations"] == [
        {
            "path": "$.issues",
            "message": "has 3 issues; an answer may report at most 2: keep the 2 that matter most",
            "type": "too_large",
        }
    ]
    code, recorded = record(run_id, CR, json.dumps({"status": "success", "agent": CR, "issues": issues[:2]}))
    assert (code, recorded["valid"], recorded["issues_count"]) == (0, True, 2)
