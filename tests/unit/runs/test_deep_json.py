"""A JSON file nested too deeply is bad input with its own error code, never an internal error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fixloop.cli import cli
from fixloop.core import jsoncodec
from fixloop.failures.gotest import parse_go
from fixloop.runs.detect_commands import detect_commands

DEPTHS = [jsoncodec.MAX_DOCUMENT_DEPTH + 1, 200_000]


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def invoke(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_codec_refuses_a_deep_document_as_invalid_json(depth: int) -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        jsoncodec.loads_document(nested(depth))
    assert "nested" in caught.value.msg


def test_the_codec_reads_a_document_at_the_limit_and_measures_depth() -> None:
    text = '{"a": ' + nested(jsoncodec.MAX_DOCUMENT_DEPTH - 1) + "}"
    assert jsoncodec.nesting_depth(jsoncodec.loads_document(text)) == jsoncodec.MAX_DOCUMENT_DEPTH
    assert jsoncodec.nesting_depth(7) == 0
    assert jsoncodec.nesting_depth({"a": [], "b": {"c": [1]}}) == 3


def test_plain_loads_turns_a_recursion_error_into_a_decode_error() -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        jsoncodec.loads(nested(200_000).encode())
    assert caught.value.msg == "nested too deeply to read"


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_config_is_invalid_config(git_project: Path, depth: int) -> None:
    (git_project / ".claude").mkdir(exist_ok=True)
    (git_project / ".claude" / "fixloop.json").write_text('{"test_command": ' + nested(depth) + "}")
    code, document = invoke("run", "start", "--workflow", "review")
    assert code == 2, document
    assert document["error"]["code"] == "INVALID_CONFIG"
    assert "nested" in document["error"]["message"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_baseline_is_invalid_baseline(git_project: Path, depth: int) -> None:
    (git_project / ".fixloop").mkdir()
    (git_project / ".fixloop" / "baseline.json").write_text(
        '{"version": 1, "findings": ' + nested(depth) + "}"
    )
    code, document = invoke("baseline", "list")
    assert code != 70, document
    assert document["error"]["code"] == "INVALID_BASELINE"
    assert "nested" in document["error"]["message"]


def test_a_deep_package_json_proposes_no_npm_command(git_project: Path) -> None:
    (git_project / "package.json").write_text('{"scripts": {"test": "jest"}, "x": ' + nested(200_000) + "}")
    assert "tests" not in detect_commands(git_project)


def test_go_test_output_with_a_deeply_nested_line_is_read_as_text() -> None:
    deep = '{"Action": ' + nested(200_000) + "}"
    event = '{"Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\\n"}'
    parsed = parse_go("\n".join([event, deep, '{"Action":"fail","Package":"p","Test":"TestA"}']))
    assert [failure.test_id for failure in parsed.failures] == ["TestA"]
