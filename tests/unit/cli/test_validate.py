"""`fixloop validate KIND [FILE|-]` and `fixloop schema [KIND]`: exact documents and exit codes."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from helpers_runs import LIB
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fixloop.contracts.schemagen
from fixloop.cli import cli
from fixloop.cli.validate import schema, validate
from fixloop.contracts.extract import MAX_INPUT_BYTES
from fixloop.contracts.schemagen import SCHEMA_DIR
from fixloop.contracts.validation import KIND_EXAMPLES, KINDS, validate_document

KNOWN_CODES = {
    "NULL_RESPONSE",
    "JSON_PARSE_ERROR",
    "TRUNCATION_DATA_LOSS",
    "MISSING_STATUS",
    "SCHEMA_VIOLATION",
}


def run_cli(args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(LIB)}
    return subprocess.run(
        [sys.executable, "-m", "fixloop", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
    )


def invoke(command: click.Command, args: list[str], stdin: bytes = b"") -> tuple[int, Any]:
    """Run the subcommand as `fixloop` runs it: through the group, whose one error wrapper answers JSON."""
    assert command.name is not None
    result = CliRunner().invoke(cli, [command.name, *args], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, json.loads(result.stdout)


def example(kind: str) -> dict[str, Any]:
    return copy.deepcopy(KIND_EXAMPLES[kind])


# --- validate: success ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
def test_examples_print_their_normalized_document(kind: str) -> None:
    code, printed = invoke(validate, [kind], json.dumps(example(kind)).encode())
    assert code == 0
    assert printed == validate_document(kind, example(kind))
    assert set(printed) >= set(example(kind))


def test_stdin_dash_and_file_are_the_same(tmp_path: Path) -> None:
    message = b'Done.\n```json\n{"status": "success", "agent": "fixloop:code-reviewer"}\n```\n'
    (tmp_path / "out.txt").write_bytes(message)
    expected: dict[str, Any] = {
        "status": "success",
        "agent": "code-reviewer",
        "issues": [],
        "positive_observations": [],
        "error": None,
    }
    assert invoke(validate, ["reviewer"], message) == (0, expected)
    assert invoke(validate, ["reviewer", "-"], message) == (0, expected)
    assert invoke(validate, ["reviewer", str(tmp_path / "out.txt")]) == (0, expected)


def test_end_to_end_through_the_fixloop_command() -> None:
    result = run_cli(["validate", "reviewer"], b'{"status": "success", "agent": "review-code-reviewer"}')
    assert result.returncode == 0
    assert result.stderr == b""
    assert result.stdout.decode() == (
        "{\n"
        '  "status": "success",\n'
        '  "agent": "code-reviewer",\n'
        '  "issues": [],\n'
        '  "positive_observations": [],\n'
        '  "error": null\n'
        "}\n"
    )


# --- validate: every error code ------------------------------------------------------------------------


def test_null_response() -> None:
    assert invoke(validate, ["fixer"], b"  \n") == (
        1,
        {
            "status": "failed",
            "error": {
                "code": "NULL_RESPONSE",
                "message": "The agent's final message is empty: it must end with the JSON result document.",
                "kind": "fixer",
                "hint": "Answer with the JSON result document as your final message.",
            },
        },
    )


def test_json_parse_error() -> None:
    code, printed = invoke(validate, ["verifier"], b'{"status": "success", "agent": review-verifier}')
    assert code == 1
    assert printed == {
        "status": "failed",
        "error": {
            "code": "JSON_PARSE_ERROR",
            "message": "The agent's final message holds no parsable JSON document: "
            "Expecting value: line 1 column 32 (char 31)",
            "kind": "verifier",
            "parse_error": "Expecting value: line 1 column 32 (char 31)",
            "raw_output_preview": '{"status": "success", "agent": review-verifier}',
            "error_context": '{"status": "success", "agent": review-verifier}',
            "hint": "Answer with exactly one JSON document (a ```json block is fine); quote and escape every "
            'string (write \\" for a quote inside a string). Parser said: '
            "Expecting value: line 1 column 32 (char 31)",
        },
    }


def test_truncation_data_loss() -> None:
    code, printed = invoke(
        validate, ["verifier"], b'{"status": "success", "task_id": "t", "agent": "review-ver'
    )
    assert code == 1
    assert printed == {
        "status": "failed",
        "error": {
            "code": "TRUNCATION_DATA_LOSS",
            "message": "The agent's JSON output was cut off while writing field 'agent'; "
            "missing required fields: agent.",
            "kind": "verifier",
            "missing_fields": ["agent"],
            "fields_present": ["status", "task_id"],
            "truncated_field": "agent",
            "raw_output_preview": '{"status": "success", "task_id": "t", "agent": "review-ver',
            "hint": "Your JSON was cut off before it closed. Return a shorter but complete document "
            "(fewer or shorter entries, no code excerpts longer than needed).",
        },
    }


@pytest.mark.parametrize("status", ["missing", None])
def test_missing_status(status: str | None) -> None:
    document: dict[str, Any] = {"agent": "code-reviewer", "issues": []}
    if status != "missing":
        document["status"] = status
    code, printed = invoke(validate, ["reviewer"], json.dumps(document).encode())
    assert code == 1
    violation = (
        {
            "path": "$.status",
            "message": "missing required field 'status' (one of 'success', 'failed')",
            "type": "missing",
        }
        if status == "missing"
        else {
            "path": "$.status",
            "message": "must be one of 'success', 'failed'; got null",
            "type": "literal_error",
        }
    )
    assert printed == {
        "status": "failed",
        "error": {
            "code": "MISSING_STATUS",
            "message": 'The reviewer document has no "status" field.',
            "kind": "reviewer",
            "violations": [violation],
            "violation_count": 1,
            "hint": "Add a top-level \"status\" field ('success' or 'failed') and return the whole JSON "
            f"document again. 1 problem: {violation['path']} {violation['message']}",
        },
    }


def test_missing_status_only_for_kinds_with_a_status() -> None:
    code, printed = invoke(validate, ["review-task"], b'{"task_id": "t"}')
    assert code == 1
    assert printed["error"]["code"] == "SCHEMA_VIOLATION"


def test_schema_violation() -> None:
    document = example("reviewer")
    document["issues"][0]["confidence"] = "85%"
    document["issues"][0]["file"] = "../x.py"
    del document["issues"][0]["auto_fixable"]
    code, printed = invoke(validate, ["reviewer"], json.dumps(document).encode())
    assert code == 1
    assert printed == {
        "status": "failed",
        "error": {
            "code": "SCHEMA_VIOLATION",
            "message": "The reviewer document breaks its contract in 3 places.",
            "kind": "reviewer",
            "violations": [
                {
                    "path": "$.issues[0].confidence",
                    "message": "must be an integer from 0 to 100; got '85%'",
                    "type": "int_type",
                },
                {
                    "path": "$.issues[0].file",
                    "message": "must stay inside the repository (no '..' parts); got '../x.py'",
                    "type": "value_error",
                },
                {
                    "path": "$.issues[0].auto_fixable",
                    "message": "missing required field 'auto_fixable' (true or false)",
                    "type": "missing",
                },
            ],
            "violation_count": 3,
            "hint": "Fix 3 problems and return the whole corrected JSON document: "
            "$.issues[0].confidence must be an integer from 0 to 100; got '85%'; "
            "$.issues[0].file must stay inside the repository (no '..' parts); got '../x.py'; "
            "$.issues[0].auto_fixable missing required field 'auto_fixable' (true or false)",
        },
    }


def test_hint_lists_at_most_five_problems() -> None:
    document = {"status": "success", "agent": "code-reviewer", "issues": [{}, {}]}
    code, printed = invoke(validate, ["reviewer"], json.dumps(document).encode())
    assert code == 1
    assert printed["error"]["violation_count"] == 18
    assert len(printed["error"]["violations"]) == 18
    assert printed["error"]["hint"].endswith("; and 13 more")


def test_unknown_kind_and_usage_errors() -> None:
    assert invoke(validate, ["nope"], b"{}")[0] == 2
    result = run_cli(["validate", "nope"])
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["code"] == "UNKNOWN_KIND"
    result = run_cli(["validate"])
    assert result.returncode == 2
    assert json.loads(result.stdout) == {
        "status": "failed",
        "error": {
            "code": "USAGE_ERROR",
            "message": "Missing argument 'KIND'.",
            "command": ["validate"],
            "usage": "Usage: fixloop validate [OPTIONS] KIND [FILE]",
        },
    }


def test_file_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = str(tmp_path / "missing.json")
    assert invoke(validate, ["reviewer", missing]) == (
        2,
        {
            "status": "failed",
            "error": {"code": "FILE_NOT_FOUND", "message": f"No such file: {missing}", "path": missing},
        },
    )
    assert invoke(validate, ["reviewer", str(tmp_path)]) == (
        2,
        {
            "status": "failed",
            "error": {"code": "NOT_A_FILE", "message": f"Not a file: {tmp_path}", "path": str(tmp_path)},
        },
    )
    locked = tmp_path / "locked.json"
    locked.write_text("{}")

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", refuse)
    assert invoke(validate, ["reviewer", str(locked)]) == (
        2,
        {
            "status": "failed",
            "error": {
                "code": "FILE_UNREADABLE",
                "message": f"Cannot read {locked}: Permission denied",
                "path": str(locked),
            },
        },
    )


def test_schema_disagreement_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = fixloop.contracts.schemagen.load_schema

    def stricter(kind: str, directory: Path = SCHEMA_DIR) -> dict[str, Any]:
        loaded = real(kind, directory)
        loaded["properties"]["agent"] = {"const": "someone-else"}
        return loaded

    monkeypatch.setattr(fixloop.contracts.schemagen, "load_schema", stricter)
    code, printed = invoke(validate, ["reviewer"], json.dumps(example("reviewer")).encode())
    assert code == 70
    assert printed == {
        "status": "failed",
        "error": {
            "code": "INTERNAL_ERROR",
            "message": "The reviewer document passed the pydantic contract but not the checked-in JSON "
            "Schema (regenerate the schemas with `python -m fixloop.contracts.schemagen`).",
            "kind": "reviewer",
            "schema_errors": [{"path": "$.agent", "message": "'someone-else' was expected"}],
        },
    }


def test_megabytes_through_the_command() -> None:
    count = MAX_INPUT_BYTES // 1010
    body = json.dumps(
        {"status": "success", "agent": "code-reviewer", "positive_observations": ["x" * 1000] * count}
    )
    assert MAX_INPUT_BYTES * 0.95 < len(body) < MAX_INPUT_BYTES - len("Here:\n")
    result = run_cli(["validate", "reviewer"], b"Here:\n" + body[: len(body) - 10].encode())
    assert result.returncode == 1
    assert b"Traceback" not in result.stderr
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["truncated_field"], error["missing_fields"]) == (
        "TRUNCATION_DATA_LOSS",
        "positive_observations",
        [],
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(list(KINDS)),
    st.one_of(
        st.binary(max_size=300),
        st.lists(
            st.sampled_from([b"{", b"}", b'"', b"[", b"]", b"\\", b"\x00", b"\xff", b"a", b"```json\n"])
        ).map(b"".join),
    ),
)
def test_the_command_never_prints_a_traceback(kind: str, raw: bytes) -> None:
    result = run_cli(["validate", kind], raw)
    assert b"Traceback" not in result.stderr
    assert result.stderr == b""
    printed = json.loads(result.stdout)
    if result.returncode == 0:
        assert validate_document(kind, printed) == printed
    else:
        assert result.returncode == 1
        assert printed["status"] == "failed"
        assert printed["error"]["code"] in KNOWN_CODES


# --- schema --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
def test_schema_prints_the_checked_in_file(kind: str) -> None:
    code, printed = invoke(schema, [kind])
    assert code == 0
    assert printed == json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))
    assert printed["$id"] == f"https://fixloop.dev/schemas/{kind}.json"


def test_schema_without_kind_lists_the_kinds() -> None:
    code, printed = invoke(schema, [])
    assert code == 0
    assert printed == {
        "kinds": {
            kind: {
                "$id": f"https://fixloop.dev/schemas/{kind}.json",
                "file": str(SCHEMA_DIR / f"{kind}.schema.json"),
            }
            for kind in KINDS
        }
    }


def test_schema_of_an_unknown_kind() -> None:
    code, printed = invoke(schema, ["nope"])
    assert code == 2
    assert printed["error"]["code"] == "UNKNOWN_KIND"


def test_schema_file_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(fixloop.contracts.schemagen, "SCHEMA_DIR", tmp_path)

    def from_tmp(kind: str, directory: Path = tmp_path) -> dict[str, Any]:
        return {}

    def path_in_tmp(kind: str, directory: Path = tmp_path) -> Path:
        return tmp_path / f"{kind}.schema.json"

    monkeypatch.setattr(fixloop.contracts.schemagen, "schema_path", path_in_tmp)
    monkeypatch.setattr(
        fixloop.contracts.schemagen,
        "load_schema",
        lambda kind, directory=tmp_path: json.loads(path_in_tmp(kind).read_text()),
    )
    code, printed = invoke(schema, ["fixer"])
    assert code == 70
    assert printed == {
        "status": "failed",
        "error": {
            "code": "SCHEMA_MISSING",
            "message": "The schema file of fixer cannot be read: No such file or directory",
            "kind": "fixer",
            "path": str(tmp_path / "fixer.schema.json"),
        },
    }
