from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers_runs import read_events
from pydantic import ValidationError

from fixloop.cli import cli
from fixloop.contracts.coordinator import LoopConfig
from fixloop.contracts.events import ConfidenceDecision
from fixloop.core import thresholds
from fixloop.core.errors import FixloopError
from fixloop.review import policy
from fixloop.runs import creation

# ---- retry ---------------------------------------------------------------------------------------


def test_constants_follow_the_designs() -> None:
    assert set(thresholds.RECOVERABLE_ERRORS) == {"TIMEOUT", "RATE_LIMIT", "OUTPUT_TRUNCATED"}
    assert thresholds.MAX_RETRIES == 2
    assert thresholds.MAX_QUALITY_RETRIES == 3
    assert thresholds.QUALITY_PASS_SCORE == 50
    assert thresholds.CONFIDENCE_THRESHOLDS == {"auto_continue": 60, "ask_user": 40, "stop": 0}


def test_first_timeout_is_retried_with_context() -> None:
    assert policy.retry_decision("TIMEOUT", 1) == {
        "code": "TIMEOUT",
        "recoverable": True,
        "retry": True,
        "reason": "recoverable",
        "attempt": 1,
        "max_retries": 2,
        "recovery_action": "retry_same_input",
        "retry_context": {
            "attempt_number": 2,
            "previous_errors": ["TIMEOUT"],
            "recovery_actions_taken": ["retry_same_input"],
        },
    }


def test_second_failure_is_retried_and_third_is_not() -> None:
    second = policy.retry_decision("OUTPUT_TRUNCATED", 2, ["RATE_LIMIT"])
    assert second["retry"] is True
    assert second["retry_context"] == {
        "attempt_number": 3,
        "previous_errors": ["RATE_LIMIT", "OUTPUT_TRUNCATED"],
        "recovery_actions_taken": ["wait_and_retry", "simplify_input"],
    }
    third = policy.retry_decision("TIMEOUT", 3, ["TIMEOUT", "TIMEOUT"])
    assert third["retry"] is False
    assert third["reason"] == "max_retries_exceeded"
    assert third["recovery_action"] is None
    assert third["retry_context"] == {
        "attempt_number": 3,
        "previous_errors": ["TIMEOUT", "TIMEOUT", "TIMEOUT"],
        "recovery_actions_taken": ["retry_same_input", "retry_same_input"],
    }


@pytest.mark.parametrize("code", ["JSON_PARSE_ERROR", "MISSING_STATUS", "NULL_RESPONSE", "AGENT_TIMEOUT"])
def test_other_errors_are_not_retried(code: str) -> None:
    decision = policy.retry_decision(code, 1)
    assert (decision["recoverable"], decision["retry"], decision["reason"]) == (
        False,
        False,
        "not_recoverable",
    )
    assert decision["retry_context"]["attempt_number"] == 1


def test_codes_are_normalised_to_upper_case() -> None:
    assert policy.retry_decision(" rate_limit ", 1)["code"] == "RATE_LIMIT"
    assert policy.is_recoverable("timeout") is True


@pytest.mark.parametrize(
    ("code", "attempt"), [("a;b", 1), ("", 1), ("TIMEOUT", 0), ("TIMEOUT", -1), ("TIMEOUT", True)]
)
def test_bad_retry_input_is_refused(code: str, attempt: int) -> None:
    with pytest.raises(FixloopError) as caught:
        policy.retry_decision(code, attempt)
    assert caught.value.code == "INVALID_ARGUMENT"
    assert caught.value.exit_code == 2


# ---- quality -------------------------------------------------------------------------------------


def test_quality_pass_at_fifty() -> None:
    assert policy.quality_decision(50) == {
        "passed": True,
        "score": 50,
        "threshold": 50,
        "retry": False,
        "attempt": 1,
        "max_retries": 3,
        "error": None,
    }


def test_quality_below_fifty_asks_for_another_review() -> None:
    decision = policy.quality_decision(49)
    assert decision["passed"] is False
    assert decision["retry"] is True
    assert decision["error"] == {
        "code": "QUALITY_TOO_LOW",
        "message": "Review quality score 49 is below the pass score 50.",
        "score": 49,
        "threshold": 50,
        "recommended_action": "review_again_with_stricter_requirements",
    }


def test_quality_retries_are_bounded() -> None:
    assert policy.quality_decision(10, attempt=3)["retry"] is True
    last = policy.quality_decision(10, attempt=4)
    assert last["retry"] is False
    assert last["error"]["recommended_action"] == "stop_retrying"
    assert policy.quality_decision(10, attempt=2, max_retries=1)["retry"] is False
    assert policy.quality_decision(10, attempt=1, max_retries=0)["retry"] is False


@pytest.mark.parametrize(
    ("score", "code"), [(101, "INVALID_SCORE"), (-1, "INVALID_SCORE"), (3.5, "INVALID_SCORE")]
)
def test_quality_score_range(score: int, code: str) -> None:
    with pytest.raises(FixloopError) as caught:
        policy.quality_decision(score)
    assert caught.value.code == code


def test_quality_max_retries_capped_at_three() -> None:
    with pytest.raises(FixloopError) as caught:
        policy.quality_decision(10, max_retries=4)
    assert caught.value.code == "INVALID_ARGUMENT"


# ---- confidence ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "decision"),
    [
        (100, "auto_continue"),
        (60, "auto_continue"),
        (59, "ask_user"),
        (40, "ask_user"),
        (39, "stop"),
        (0, "stop"),
    ],
)
def test_confidence_boundaries(score: int, decision: str) -> None:
    assert policy.confidence_decision(score) == {
        "confidence_score": score,
        "decision": decision,
        "threshold": {"auto_continue": 60, "ask_user": 40, "stop": 0},
    }


@pytest.mark.parametrize("score", [101, -1, True, "65"])
def test_confidence_rejects_non_scores(score: object) -> None:
    with pytest.raises(FixloopError) as caught:
        policy.confidence_decision(score)  # type: ignore[arg-type]
    assert caught.value.code == "INVALID_SCORE"


def test_decision_threshold_is_a_copy() -> None:
    policy.confidence_decision(50)["threshold"]["auto_continue"] = 1
    assert thresholds.CONFIDENCE_THRESHOLDS["auto_continue"] == 60


# ---- CLI -----------------------------------------------------------------------------------------


def invoke(*args: str) -> tuple[int, dict[str, object]]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, json.loads(result.output)


def test_cli_retry() -> None:
    code, doc = invoke("policy", "retry", "RATE_LIMIT", "--attempt", "2", "--previous-error", "TIMEOUT")
    assert code == 0
    assert doc == policy.retry_decision("RATE_LIMIT", 2, ["TIMEOUT"])


def test_cli_quality_and_confidence() -> None:
    assert invoke("policy", "quality", "30", "--attempt", "2") == (0, policy.quality_decision(30, attempt=2))
    assert invoke("policy", "confidence", "40") == (0, policy.confidence_decision(40))


@pytest.mark.parametrize(
    ("args", "error_code"),
    [
        (("policy", "confidence", "abc"), "INVALID_SCORE"),
        (("policy", "confidence", "101"), "INVALID_SCORE"),
        (("policy", "quality", "1e3"), "INVALID_SCORE"),
        (("policy", "retry", "TIMEOUT", "--attempt", "x"), "INVALID_ARGUMENT"),
        (("policy", "retry", "TIME OUT", "--attempt", "1"), "INVALID_ARGUMENT"),
        (("policy", "confidence", "50", "--phase", "1"), "USAGE_ERROR"),
        (("policy", "confidence", "50", "--run", "../x"), "INVALID_RUN_ID"),
    ],
)
def test_cli_bad_input(args: tuple[str, ...], error_code: str) -> None:
    code, doc = invoke(*args)
    assert code == 2
    assert doc["status"] == "failed"
    assert doc["error"]["code"] == error_code  # type: ignore[index]


def test_cli_confidence_logs_a_decision_event(git_project: Path, fake_clock: object) -> None:
    started = creation.start_run("bugfix", root=git_project, stack="frontend")
    run_id = started["state"]["run_id"]
    code, doc = invoke(
        "policy", "confidence", "65", "--run", run_id, "--phase", "1", "--factors", '{"clarity": 70}'
    )
    assert code == 0
    assert doc == {**policy.confidence_decision(65), "run_id": run_id, "logged": True}
    events = read_events(started["state"]["logging"]["log_files"]["jsonl"])
    decision = events[-1]
    assert {key: decision[key] for key in decision if key != "ts"} == {
        "level": "X",
        "type": "CONFIDENCE_DECISION",
        "session_id": run_id,
        "confidence_score": 65,
        "decision": "auto_continue",
        "threshold": {"auto_continue": 60, "ask_user": 40, "stop": 0},
        "phase": "phase_1",
        "factors": {"clarity": 70},
    }
    ConfidenceDecision.model_validate(decision)


def test_cli_confidence_refuses_a_phase_the_workflow_lacks(git_project: Path, fake_clock: object) -> None:
    run_id = creation.start_run("bugfix", root=git_project)["state"]["run_id"]
    code, doc = invoke("policy", "confidence", "65", "--run", run_id, "--phase", "9")
    assert code == 2
    assert doc["error"]["code"] == "INVALID_PHASE"  # type: ignore[index]


def test_the_loop_and_the_config_share_the_quality_retry_bound() -> None:
    """One number: the config's default and ceiling are the policy's MAX_QUALITY_RETRIES (3)."""
    field = LoopConfig.model_fields["max_quality_retries"]
    assert field.default == thresholds.MAX_QUALITY_RETRIES == 3
    assert LoopConfig.model_validate({"max_quality_retries": 3}).max_quality_retries == 3
    with pytest.raises(ValidationError):
        LoopConfig.model_validate({"max_quality_retries": 4})
