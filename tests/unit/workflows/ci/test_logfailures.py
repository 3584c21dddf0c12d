"""A reduced CI log -> the failures fix-ci keeps: ids, failing steps without a known failure, secrets masked,
and at most MAX_FAILURES failures of MAX_CHARS characters in all, whatever the log."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from workflows.ci.ci_helpers import PYTEST_FAILURE, RUFF_FAILURE, STAMP

from fixloop.failures import reduce_log_text
from fixloop.workflows.ci.logfailures import LIMITS, MAX_CHARS, MAX_FAILURES, log_failures, shows_failure

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def gh_text(*steps: tuple[str, str, list[str]]) -> str:
    return "".join(f"{job}\t{step}\t{STAMP} {line}\n" for job, step, lines in steps for line in lines)


def test_failures_get_ids_in_log_order() -> None:
    text = gh_text(("lint", "Ruff", RUFF_FAILURE), ("test", "Run pytest", PYTEST_FAILURE))
    found = log_failures(reduce_log_text(text, LIMITS), only_failed_steps=True)
    rows = [(f["id"], f["test_id"], f["kind"], f["job"], f["step"]) for f in found["failures"]]
    assert rows == [
        ("F1", "calc.py:1:8 F401", "lint", "lint", "Ruff"),
        ("F2", "tests/test_calc.py::test_divide", "test", "test", "Run pytest"),
    ]
    assert (found["failed"], found["failures_dropped"], found["notes"]) == (True, 0, [])


def test_a_failing_step_without_a_known_failure_is_kept_with_its_last_lines() -> None:
    lines = [f"deploying part {n}" for n in range(300)] + [f"curl: (22) 503 {TOKEN}"]
    lines.append("##[error]Process completed with exit code 22.")
    found = log_failures(
        reduce_log_text(gh_text(("deploy", "Upload", lines)), LIMITS), only_failed_steps=True
    )
    (failure,) = found["failures"]
    assert (failure["id"], failure["test_id"], failure["kind"], failure["lines_dropped"]) == (
        "F1",
        "deploy / Upload",
        "step",
        102,
    )
    assert failure["message"] == (
        "The step failed with exit code 22; no failure was recognised in its log (its last lines follow)."
    )
    details = failure["details"].split("\n")
    assert len(details) == LIMITS.lines_per_failure and details[-1] == "Process completed with exit code 22."
    assert TOKEN not in failure["details"] and "curl: (22) 503 [REDACTED]" in details


def test_whether_a_log_shows_a_failure() -> None:
    passing = "".join(f"step {n} done\n" for n in range(30))
    assert not shows_failure(reduce_log_text("", LIMITS), only_failed_steps=True)
    assert not shows_failure(reduce_log_text(passing, LIMITS), only_failed_steps=False)
    assert shows_failure(reduce_log_text(passing, LIMITS), only_failed_steps=True)  # gh printed failed steps
    assert shows_failure(reduce_log_text(passing + "ERROR: Job failed: exit code 1\n", LIMITS), False)
    assert log_failures(reduce_log_text(passing, LIMITS), only_failed_steps=False)["failures"] == []


def test_secrets_in_a_failures_message_are_masked() -> None:
    lines = [
        f"FAILED tests/test_api.py::test_login - AssertionError: token {TOKEN} refused",
        "1 failed in 1s",
    ]
    (failure,) = log_failures(reduce_log_text(gh_text(("t", "s", lines)), LIMITS), True)["failures"]
    assert failure["message"] == "AssertionError: token [REDACTED] refused"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(PYTEST_FAILURE + RUFF_FAILURE)
        | st.builds(
            lambda n, s: f"FAILED tests/t.py::test_{n} - {s}", st.integers(0, 999), st.text(max_size=300)
        )
        | st.text(max_size=200),
        max_size=300,
    ),
    st.booleans(),
)
def test_what_is_kept_is_bounded_whatever_the_log(lines: list[str], only_failed: bool) -> None:
    found = log_failures(reduce_log_text("\n".join(lines), LIMITS), only_failed)
    failures = found["failures"]
    assert len(failures) <= MAX_FAILURES
    assert sum(len(f["message"]) + len(f["details"]) for f in failures) <= MAX_CHARS
    assert [f["id"] for f in failures] == [f"F{n}" for n in range(1, len(failures) + 1)]
    assert all(len(f["details"].split("\n")) <= LIMITS.lines_per_failure for f in failures)
    assert found["failed"] or failures == []
