from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from fixloop.contracts.coordinator import DEFAULT_PRICES, LoopConfig
from fixloop.core.errors import FixloopError
from fixloop.runs.config import command_status, config_from_dump, load_config


def violations_of(project: Path, config_file: Path | None = None) -> list[dict[str, str]]:
    with pytest.raises(FixloopError) as caught:
        load_config(project, config_file)
    assert caught.value.code == "INVALID_CONFIG"
    assert caught.value.exit_code == 2
    violations: list[dict[str, str]] = caught.value.details["violations"]
    return violations


def test_defaults_without_files(tmp_path: Path) -> None:
    loaded = load_config(tmp_path)
    assert loaded.config == LoopConfig()
    assert loaded.sources == []


def test_relative_config_file_is_taken_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "c.json").write_text('{"typecheck_command": "mypy ."}')
    monkeypatch.chdir(tmp_path)
    loaded = load_config(tmp_path / "elsewhere", "c.json")
    assert loaded.config.typecheck_command == "mypy ."
    assert loaded.sources == [str(tmp_path / "c.json")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "invalid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
        ("[1]", "must be a JSON object, not list"),
        ("null", "must be a JSON object, not NoneType"),
        (b"\xff", "not UTF-8: invalid start byte"),
    ],
)
def test_unreadable_documents(tmp_path: Path, content: str | bytes, message: str) -> None:
    path = tmp_path / "c.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    assert violations_of(tmp_path, path) == [{"path": "$", "message": message}]


def test_missing_and_directory(tmp_path: Path) -> None:
    assert violations_of(tmp_path, tmp_path / "nope.json") == [{"path": "$", "message": "file not found"}]
    assert violations_of(tmp_path, tmp_path) == [{"path": "$", "message": "is a directory, not a JSON file"}]


def test_every_violation_is_listed(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "min_required_agents": 7,
                "confidence_threshold": 101,
                "on_verification_failure": "explode",
                "use_verifier": "yes",
                "extra": 1,
            }
        )
    )
    assert [item["path"] for item in violations_of(tmp_path, path)] == [
        "$.confidence_threshold",
        "$.extra",
        "$.min_required_agents",
        "$.on_verification_failure",
        "$.use_verifier",
    ]


def test_command_status_says_not_configured() -> None:
    assert command_status(LoopConfig(test_command="pytest -q")) == {
        "tests": {"command": "pytest -q", "configured": True, "reason": None},
        "lint": {"command": None, "configured": False, "reason": "not_configured"},
        "typecheck": {"command": None, "configured": False, "reason": "not_configured"},
    }


def test_config_from_dump() -> None:
    assert config_from_dump(LoopConfig(lint_command="ruff").model_dump()) == LoopConfig(lint_command="ruff")
    bad: object
    for bad in (None, [], {"max_review_iterations": 0}):
        with pytest.raises(FixloopError) as caught:
            config_from_dump(bad)
        assert caught.value.code == "INVALID_STATE"


def test_the_defaults_a_run_starts_with() -> None:
    defaults = LoopConfig().model_dump(mode="json")
    assert {
        key: defaults[key] for key in ("max_review_iterations", "min_required_agents", "confidence_threshold")
    } == {
        "max_review_iterations": 3,
        "min_required_agents": 4,
        "confidence_threshold": 80,
    }
    assert (defaults["questions"], defaults["max_tokens"], defaults["max_cost"]) == ("auto", None, None)
    assert defaults["models"] == {
        "reviewers": "sonnet",
        "verifier": "sonnet",
        "fixer": "sonnet",
        "analysts": "sonnet",
        "implementer": "sonnet",
        "writers": "sonnet",
    }
    assert defaults["prices"]["sonnet"] == {
        "input": 3.0,
        "output": 15.0,
        "cache_write": 3.75,
        "cache_read": 0.3,
    }


def test_a_model_name_is_a_family_the_agent_tool_takes() -> None:
    assert LoopConfig.model_validate({"models": {"reviewers": "opus"}}).models.reviewers == "opus"
    # Claude Code's Agent tool refuses a call whose `model` is a full model id: refused here instead.
    for name in ("claude-opus-4-5", "gpt-5; rm -rf /"):
        with pytest.raises(ValidationError):
            LoopConfig.model_validate({"models": {"reviewers": name}})


def test_the_finding_rules_config(tmp_path: Path) -> None:
    defaults = LoopConfig()
    assert (defaults.review_include, defaults.review_exclude, defaults.min_severity) == ([], [], "low")
    assert (defaults.max_findings, defaults.categories) == (None, {})
    (tmp_path / "c.json").write_text(
        json.dumps(
            {
                "review_include": ["src/**"],
                "review_exclude": ["*_pb2.py"],
                "min_severity": "high",
                "max_findings": 5,
                "categories": {"style": False, "Logic Error": True},
            }
        )
    )
    config = load_config(tmp_path, tmp_path / "c.json").config
    assert (config.review_include, config.review_exclude) == (["src/**"], ["*_pb2.py"])
    assert (config.min_severity, config.max_findings) == ("high", 5)
    assert config.categories == {"style": False, "Logic Error": True}


def test_bad_finding_rules_are_named(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(
        json.dumps(
            {
                "review_include": [" "],
                "min_severity": "severe",
                "max_findings": 0,
                "categories": {"style": "off", "-bad": False},
            }
        )
    )
    paths = [item["path"] for item in violations_of(tmp_path, tmp_path / "c.json")]
    assert paths == [
        "$.categories.-bad.[key]",
        "$.categories.style",
        "$.max_findings",
        "$.min_severity",
        "$.review_include[0]",
    ]


def test_prices_for_one_model_keep_the_list_prices_of_the_others(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    opus = {"input": 4.0, "output": 20.0, "cache_write": 5.0, "cache_read": 0.4}
    (tmp_path / ".claude" / "fixloop.json").write_text(json.dumps({"prices": {"opus": opus}}))
    extra = {"input": 9.0, "output": 9.0, "cache_write": 9.0, "cache_read": 9.0}
    given = tmp_path / "more.json"
    given.write_text(json.dumps({"prices": {"claude-sonnet-9-9": extra}}))
    prices = load_config(tmp_path, given).dump()["prices"]
    listed = {name: price.model_dump() for name, price in DEFAULT_PRICES.items()}
    assert prices == {**listed, "opus": opus, "claude-sonnet-9-9": extra}
    assert load_config(tmp_path).dump()["prices"] == {**listed, "opus": opus}
