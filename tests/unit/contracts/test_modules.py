"""The contracts package stays in small modules, and its old import paths keep working."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from helpers_runs import LIB

CONTRACTS = LIB / "fixloop" / "contracts"
MAX_LINES = 400


@pytest.mark.parametrize("path", sorted(CONTRACTS.glob("*.py")), ids=lambda path: path.name)
def test_no_module_is_over_400_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize(
    ("module", "names"),
    [
        (
            "fixloop.contracts.validation",
            "validate_text validate_document parse_text parse_document normalize model_for required_fields "
            "KINDS KINDS_WITH_STATUS KIND_EXAMPLES KIND_DESCRIPTIONS AnyEvent EventDocument MISSING_STATUS "
            "SCHEMA_VIOLATION UNKNOWN_KIND MAX_VIOLATIONS HINT_VIOLATIONS violation_error violations_from "
            "check_text check_document Checked",
        ),
        (
            "fixloop.contracts.extract",
            "extract extract_json Extraction decode_input preview recover_top_level_fields MAX_INPUT_BYTES "
            "MAX_DEPTH MAX_CANDIDATES MAX_SCAN_TOKENS PREVIEW_CHARS MAX_FIELDS_REPORTED "
            "TOKEN_PATTERN_PORTABLE "
            "TOKEN_PATTERN_POSSESSIVE NULL_RESPONSE JSON_PARSE_ERROR TRUNCATION_DATA_LOSS",
        ),
    ],
)
def test_public_names_stay_importable_from_their_modules(module: str, names: str) -> None:
    loaded = importlib.import_module(module)
    assert [name for name in names.split() if not hasattr(loaded, name)] == []
