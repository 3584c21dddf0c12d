"""`fixloop baseline add|list|remove` through the CLI: JSON answers and exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_baseline import reviewed_run

from fixloop.cli import cli, main


def invoke(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, json.loads(result.output)


def test_add_to_the_latest_run_list_and_remove(git_project: Path) -> None:
    run_id = reviewed_run(git_project)
    code, added = invoke("baseline", "add", "FL-002", "FL-003", "--reason", "accepted in review")
    assert code == 0
    assert added["run_id"] == run_id
    assert [item["issue_id"] for item in added["added"]] == ["FL-002", "FL-003"]

    code, listed = invoke("baseline", "list")
    assert (code, listed["count"]) == (0, 2)
    fingerprint = listed["findings"][0]["fingerprint"]

    code, removed = invoke("baseline", "remove", fingerprint)
    assert (code, removed["count"]) == (0, 1)
    code, missing = invoke("baseline", "remove", fingerprint)
    assert (code, missing["error"]["code"]) == (1, "NOT_IN_BASELINE")


def test_add_names_the_run_and_refuses_bad_input(git_project: Path) -> None:
    run_id = reviewed_run(git_project)
    code, added = invoke("baseline", "add", "FL-001", "--run", run_id, "--reason", "ok")
    assert (code, added["run_id"]) == (0, run_id)
    code, answer = invoke("baseline", "add", "FL-001", "--run", "nope", "--reason", "ok")
    assert (code, answer["error"]["code"]) == (2, "INVALID_RUN_ID")


def test_a_missing_reason_is_a_usage_error(git_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["baseline", "add", "FL-001"])
    assert done.value.code == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert (error["code"], error["message"]) == ("USAGE_ERROR", "Missing option '--reason'.")
