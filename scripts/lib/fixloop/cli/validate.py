"""`fixloop validate KIND [FILE|-]` and `fixloop schema [KIND]`."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import click

from fixloop.cli.output import print_json
from fixloop.contracts.extract import MAX_INPUT_BYTES
from fixloop.core.errors import FixloopError


def read_input(source: str) -> bytes:
    """The bytes of FILE, or of stdin for '-'; at most MAX_INPUT_BYTES + 1 are read (extract refuses more)."""
    if source == "-":
        return sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    path = Path(source)
    try:
        with path.open("rb") as stream:
            return stream.read(MAX_INPUT_BYTES + 1)
    except FileNotFoundError:
        raise FixloopError("FILE_NOT_FOUND", f"No such file: {source}", path=source) from None
    except IsADirectoryError:
        raise FixloopError("NOT_A_FILE", f"Not a file: {source}", path=source) from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise FixloopError("FILE_UNREADABLE", f"Cannot read {source}: {reason}", path=source) from None


def cross_check(kind: str, document: dict[str, Any]) -> None:
    """The normalized document must also satisfy the checked-in JSON Schema; a disagreement is our bug."""
    from fixloop.contracts.schemagen import load_schema

    jsonschema: Any = importlib.import_module("jsonschema")  # typed as Any: no stubs needed

    validator = jsonschema.Draft202012Validator(load_schema(kind))
    problems = [
        {"path": error.json_path, "message": error.message[:300]}
        for error in sorted(validator.iter_errors(document), key=lambda e: e.json_path)
    ]
    if problems:
        raise FixloopError(
            "INTERNAL_ERROR",
            f"The {kind} document passed the pydantic contract but not the checked-in JSON Schema "
            "(regenerate the schemas with `python -m fixloop.contracts.schemagen`).",
            exit_code=70,
            kind=kind,
            schema_errors=problems[:50],
        )


@click.command("validate")
@click.argument("kind")
@click.argument("file", default="-", required=False)
def validate(kind: str, file: str) -> None:
    """Validate an agent's final message (FILE, or stdin for '-') as a KIND document.

    KIND: reviewer | fixer | verifier | coordinator-input | coordinator-output | review-task | event.
    Prints the normalized document (exit 0) or {"status": "failed", "error": {...}} (exit 1 for a message
    that fails validation, 2 for a bad KIND or FILE).
    """
    from fixloop.contracts.validation import model_for, validate_text

    model_for(kind)  # UNKNOWN_KIND before reading anything
    raw = read_input(file)
    document = validate_text(kind, raw)
    cross_check(kind, document)
    print_json(document)


@click.command("schema")
@click.argument("kind", required=False)
def schema(kind: str | None) -> None:
    """Print the JSON Schema of KIND, or the list of kinds and their schema files without KIND."""
    from fixloop.contracts.schemagen import load_schema, schema_id, schema_path
    from fixloop.contracts.validation import KINDS, model_for

    if kind is None:
        kinds = {name: {"$id": schema_id(name), "file": str(schema_path(name))} for name in KINDS}
        print_json({"kinds": kinds})
        return
    model_for(kind)
    try:
        document = load_schema(kind)
    except OSError as error:
        raise FixloopError(
            "SCHEMA_MISSING",
            f"The schema file of {kind} cannot be read: {error.strerror or error}",
            exit_code=70,
            kind=kind,
            path=str(schema_path(kind)),
        ) from None
    print_json(document)
