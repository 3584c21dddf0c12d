"""The checked-in JSON Schemas: generated from the models, never drifted, and in agreement with them."""

from __future__ import annotations

import copy
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers_runs import LIB

from fixloop.contracts.schemagen import (
    SCHEMA_DIR,
    build_schema,
    drifted,
    expected_files,
    load_schema,
    main,
    render,
    schema_path,
    write,
)
from fixloop.contracts.validation import KIND_EXAMPLES, KINDS, validate_document
from fixloop.core.errors import FixloopError

jsonschema: Any = importlib.import_module("jsonschema")  # typed as Any: no stubs needed


def validator(kind: str) -> Any:
    return jsonschema.Draft202012Validator(load_schema(kind))


@pytest.mark.parametrize("kind", list(KINDS))
def test_checked_in_schema_matches_the_models(kind: str) -> None:
    checked_in = schema_path(kind).read_text(encoding="utf-8")
    assert checked_in == render(build_schema(kind)), (
        f"regenerate: python -m fixloop.contracts.schemagen ({kind})"
    )


def test_no_schema_files_of_unknown_kinds() -> None:
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.schema.json")) == sorted(
        f"{k}.schema.json" for k in KINDS
    )
    assert drifted() == []


@pytest.mark.parametrize("kind", list(KINDS))
def test_schema_header(kind: str) -> None:
    schema = load_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://fixloop.dev/schemas/{kind}.json"
    assert schema["title"] == f"fixloop {kind}"
    assert schema["examples"] == [KIND_EXAMPLES[kind]]


def test_rendering_is_sorted_indented_and_ends_with_a_newline() -> None:
    assert render({"b": 1, "a": {"d": "é", "c": [1]}}) == (
        '{\n  "a": {\n    "c": [\n      1\n    ],\n    "d": "é"\n  },\n  "b": 1\n}\n'
    )


def _copy_schemas(tmp_path: Path) -> Path:
    target = tmp_path / "schemas"
    shutil.copytree(SCHEMA_DIR, target)
    return target


def test_drift_is_detected_and_repaired(tmp_path: Path) -> None:
    directory = _copy_schemas(tmp_path)
    assert drifted(directory) == []
    reviewer = schema_path("reviewer", directory)
    reviewer.write_text(reviewer.read_text().replace('"maximum": 100', '"maximum": 99'))
    schema_path("fixer", directory).unlink()
    (directory / "old-kind.schema.json").write_text("{}\n")
    assert drifted(directory) == [
        reviewer,
        schema_path("fixer", directory),
        directory / "old-kind.schema.json",
    ]
    assert write(directory) == [reviewer, schema_path("fixer", directory), directory / "old-kind.schema.json"]
    assert drifted(directory) == []
    assert not (directory / "old-kind.schema.json").exists()
    assert {path: path.read_text() for path in expected_files(directory)} == expected_files(directory)


def test_check_flag_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = _copy_schemas(tmp_path)
    assert main(["--check", "--dir", str(directory)]) == 0
    assert capsys.readouterr().out == f"schemas up to date ({len(KINDS)} kinds)\n"
    path = schema_path("event", directory)
    path.write_text(path.read_text() + " ")
    assert main(["--check", "--dir", str(directory)]) == 1
    assert capsys.readouterr().out == f"drifted: {path}\n"
    assert path.read_text().endswith(" ")  # --check never writes
    assert main(["--dir", str(directory)]) == 0
    assert capsys.readouterr().out == f"wrote: {path}\n"
    assert main(["--check", "--dir", str(directory)]) == 0


def test_module_entry_point(tmp_path: Path) -> None:
    directory = _copy_schemas(tmp_path)
    schema_path("verifier", directory).write_text("{}\n")
    env = {**os.environ, "PYTHONPATH": str(LIB)}
    command = [sys.executable, "-m", "fixloop.contracts.schemagen", "--check", "--dir", str(directory)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 1
    assert result.stdout == f"drifted: {schema_path('verifier', directory)}\n"
    clean = subprocess.run(
        [sys.executable, "-m", "fixloop.contracts.schemagen", "--check"],
        capture_output=True,
        env=env,
        check=False,
    )
    assert clean.returncode == 0


# --- the schemas agree with the models -----------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
def test_normalized_examples_satisfy_the_schema(kind: str) -> None:
    assert list(validator(kind).iter_errors(KIND_EXAMPLES[kind])) == []
    assert list(validator(kind).iter_errors(validate_document(kind, KIND_EXAMPLES[kind]))) == []


def _mutated(kind: str, path: list[Any], value: Any) -> dict[str, Any]:
    document = copy.deepcopy(KIND_EXAMPLES[kind])
    target: Any = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return document


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("reviewer", ["issues", 0, "confidence"], 101),
        ("reviewer", ["issues", 0, "confidence"], "85"),
        ("reviewer", ["issues", 0, "severity"], "urgent"),
        ("reviewer", ["issues", 0, "unknown"], 1),
        ("reviewer", ["status"], "ok"),
        ("fixer", ["results", 0, "status"], "done"),
        ("verifier", ["verification_result", "quality_assessment", "overall_score"], -1),
        ("coordinator-input", ["config", "min_required_agents"], 0),
        ("coordinator-output", ["summary", "termination_reason"], "bored"),
        ("review-task", ["review_type"], "commit"),
        ("event", ["session_id"], "XYZ"),
        ("event", ["type"], "NOT_AN_EVENT"),
    ],
)
def test_schema_and_model_both_refuse(kind: str, path: list[Any], value: Any) -> None:
    document = _mutated(kind, path, value)
    assert list(validator(kind).iter_errors(document)) != []
    with pytest.raises(FixloopError) as caught:
        validate_document(kind, document)
    assert caught.value.code == "SCHEMA_VIOLATION"


def test_checked_in_files_are_what_load_schema_returns() -> None:
    for kind in KINDS:
        assert load_schema(kind) == json.loads(schema_path(kind).read_text(encoding="utf-8"))
    with pytest.raises(KeyError):
        load_schema("nope")
