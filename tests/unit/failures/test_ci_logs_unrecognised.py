"""GitLab jobs whose failure no parser recognises, and `go test -json` inside a CI log."""

from __future__ import annotations

from failures.logfixtures import fixture_text

from fixloop.failures.cilog import reduce_log_text
from fixloop.failures.detect import detect
from fixloop.failures.gotest import parse_go

ESC = "\x1b"


def gitlab_job(script_lines: list[str]) -> str:
    """A GitLab job log as the runner writes it: its sections, the script's step, the cleanup, the end."""
    return "".join(
        [
            f"{ESC}[0KRunning with gitlab-runner 16.11.1 (535ced5f){ESC}[0;m\n",
            f"section_start:1715677941:prepare_script\r{ESC}[0K{ESC}[0K"
            f"{ESC}[36;1mPreparing environment{ESC}[0;m\n",
            "Running on runner-xs6vzpvo-project-4123-concurrent-0 via runner-xs6vzpvo...\n",
            f"section_end:1715677943:prepare_script\r{ESC}[0K"
            f"section_start:1715677946:step_script\r{ESC}[0K{ESC}[0K"
            f'{ESC}[36;1mExecuting "step_script" stage of the job script{ESC}[0;m\n',
            *(line + "\n" for line in script_lines),
            f"section_end:1715677988:step_script\r{ESC}[0K"
            f"section_start:1715677988:cleanup_file_variables\r{ESC}[0K{ESC}[0K"
            f"{ESC}[36;1mCleaning up project directory and file based variables{ESC}[0;m\n",
            f"section_end:1715677989:cleanup_file_variables\r{ESC}[0K\n",
            f"{ESC}[31;1mERROR: Job failed: exit code 1\n{ESC}[0;m\n",
        ]
    )


def test_an_unrecognised_gitlab_failure_hands_over_the_script_step_not_the_cleanup() -> None:
    script = [
        f"{ESC}[32;1m$ ./scripts/check-config.sh{ESC}[0;m",
        "checking config/app.yml",
        "config/app.yml: key 'port' is missing",
        "1 config file is invalid",
    ]
    reduced = reduce_log_text(gitlab_job(script))
    assert [(step.step, step.exit_code) for step in reduced.steps] == [("step_script", 1)]
    assert reduced.steps[0].tail[-3:] == (
        "checking config/app.yml",
        "config/app.yml: key 'port' is missing",
        "1 config file is invalid",
    )
    assert reduced.notes == (
        "the job failed (exit code 1); no failure was recognised, the log's last lines are returned",
    )


def test_go_test_json_after_the_runners_command_lines_is_parsed() -> None:
    events = fixture_text("go/json.txt").rstrip("\n").split("\n")
    expected = [failure.test_id for failure in parse_go("\n".join(events)).failures]
    assert expected == ["TestTotalEmpty", "TestDiscounts/half"]
    step_text = "\n".join(["$ go vet ./...", "$ go test -json ./...", *events])
    assert detect(step_text) == "go"
    assert [failure.test_id for failure in parse_go(step_text).failures] == expected
    reduced = reduce_log_text(gitlab_job([f"{ESC}[32;1m$ go test -json ./...{ESC}[0;m", *events]))
    assert [(item.step, item.failure.runner, item.failure.test_id) for item in reduced.failures] == [
        ("step_script", "go", "TestTotalEmpty"),
        ("step_script", "go", "TestDiscounts/half"),
    ]
