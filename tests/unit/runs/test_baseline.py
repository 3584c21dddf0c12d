"""The project's baseline file (.fixloop/baseline.json): adding a run's issues, listing, removing, and the
errors a person can make."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_baseline import reviewed_run
from helpers_runs import FakeClock

from fixloop.core.errors import FixloopError
from fixloop.runs.baseline import add_findings, baseline_path, list_findings, load_baseline, remove_finding


def test_add_list_and_remove(git_project: Path) -> None:
    run_id = reviewed_run(git_project)
    clock = FakeClock(1_765_000_000.0)
    added = add_findings(git_project, run_id, ["fl-002", "FL-001"], "  Known;\n tracked in #12 ", clock)
    assert added["file"] == str(git_project / ".fixloop" / "baseline.json")
    assert [(item["issue_id"], item["file"], item["line"]) for item in added["added"]] == [
        ("FL-001", "src/app.py", 12),
        ("FL-002", "src/app.py", 30),
    ]
    assert (added["already_in_baseline"], added["count"]) == ([], 2)
    first = added["added"][0]
    assert first == {
        "fingerprint": first["fingerprint"],
        "file": "src/app.py",
        "line": 12,
        "category": "security",
        "description": "SQL built by string concatenation",
        "reason": "Known; tracked in #12",
        "issue_id": "FL-001",
        "run_id": run_id,
        "added_at": "2025-12-06T05:46:40.000Z",
    }
    # reviewable text: sorted, indented, one key per line, a final newline
    text = baseline_path(git_project).read_text()
    assert text == json.dumps({"version": 1, "findings": added["added"]}, indent=2, ensure_ascii=False) + "\n"

    again = add_findings(git_project, run_id, ["FL-003", "FL-001"], "generated code", clock)
    assert [item["issue_id"] for item in again["added"]] == ["FL-003"]
    assert (again["already_in_baseline"], again["count"]) == (["FL-001"], 3)
    listed = list_findings(git_project)
    assert [(item["file"], item["line"]) for item in listed["findings"]] == [
        ("src/app.py", 12),
        ("src/app.py", 30),
        ("src/db.py", 5),
    ]
    assert listed["count"] == 3

    removed = remove_finding(git_project, first["fingerprint"].upper())
    assert [item["issue_id"] for item in removed["removed"]] == ["FL-001"]
    assert removed["count"] == 2
    assert [entry["issue_id"] for entry in load_baseline(git_project)] == ["FL-002", "FL-003"]


def test_an_unknown_id_adds_nothing(git_project: Path) -> None:
    run_id = reviewed_run(git_project)
    with pytest.raises(FixloopError) as caught:
        add_findings(git_project, run_id, ["FL-001", "FL-009"], "why")
    assert caught.value.code == "UNKNOWN_ISSUE"
    assert caught.value.message == f"Run {run_id} has no issue FL-009."
    assert caught.value.details["valid_values"] == ["FL-001", "FL-002", "FL-003"]
    assert not baseline_path(git_project).exists()


@pytest.mark.parametrize(
    ("reason", "code"), [(" \n", "MISSING_ARGUMENT_VALUE"), ("x" * 501, "INVALID_ARGUMENT")]
)
def test_a_reason_is_required_and_short(git_project: Path, reason: str, code: str) -> None:
    run_id = reviewed_run(git_project)
    with pytest.raises(FixloopError) as caught:
        add_findings(git_project, run_id, ["FL-001"], reason)
    assert caught.value.code == code


def test_removing_what_is_not_there_says_so(git_project: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        remove_finding(git_project, "0123456789abcdef0123")
    assert (caught.value.code, caught.value.exit_code) == ("NOT_IN_BASELINE", 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON"),
        ("[]", 'expected {"version": 1, "findings": [...]}'),
        ('{"version": 2, "findings": []}', "version must be 1"),
        ('{"version": 1, "findings": [1]}', "findings[0] must be an object"),
        (
            '{"version": 1, "findings": [{"fingerprint": "zz", "file": "a", "line": 1, "category": "c", '
            '"description": "d", "reason": "r"}]}',
            "findings[0].fingerprint must be a fixloop fingerprint (lowercase hex)",
        ),
        (
            '{"version": 1, "findings": [{"fingerprint": "abcdef12", "file": "a", "line": 0, '
            '"category": "c", "description": "d", "reason": "r"}]}',
            "findings[0].line must be an integer from 1",
        ),
    ],
)
def test_a_broken_file_is_a_clear_error(git_project: Path, text: str, message: str) -> None:
    baseline_path(git_project).parent.mkdir()
    baseline_path(git_project).write_text(text)
    with pytest.raises(FixloopError) as caught:
        load_baseline(git_project)
    assert caught.value.code == "INVALID_BASELINE"
    assert message in caught.value.message


def test_no_file_is_an_empty_baseline(git_project: Path) -> None:
    assert list_findings(git_project) == {
        "file": str(git_project / ".fixloop" / "baseline.json"),
        "count": 0,
        "findings": [],
    }
