"""When a dependency of the engine fails to import: say so in JSON and have the environment rebuilt.

An environment with a valid stamp but a missing or corrupt package would otherwise be trusted forever.
Running in fixloop's own environment, the first failure removes its stamp, so the entry point
(scripts/fixloop) rebuilds it on the next command; a second failure within the hour after that rebuild
leaves it alone and tells the user to remove it. Standard library only: click itself may be what is broken.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import NoReturn

from fixloop.core import datadir

STAMP_NAME = "fixloop-requirements.sha256"
RECORD = "venv-broken.json"
REPEAT_WINDOW_S = 3600
EXIT_CODE = 4


def _own_venv() -> str | None:
    venv = os.path.join(datadir.data_dir(), "venv")
    try:
        same = os.path.samefile(sys.prefix, venv)
    except OSError:
        return None
    return venv if same else None


def is_dependency_failure(error: ImportError) -> bool:
    """Whether the import that failed is a dependency's, not one of fixloop's own modules."""
    return (error.name or "").split(".")[0] != "fixloop"


def broken_document(error: BaseException) -> dict[str, object]:
    """The ENGINE_BROKEN error document; marks fixloop's own environment for one rebuild."""
    cause = f"{type(error).__name__}: {error}"
    venv = _own_venv()
    if venv is None:
        suggestion = (
            f"The Python at {sys.executable} lacks a working copy of click, jsonschema or pydantic: repair "
            "it, or unset FIXLOOP_PYTHON to let fixloop use its own environment."
        )
        return _document(cause, suggestion)
    record_path = os.path.join(os.path.dirname(venv), RECORD)
    try:
        with open(record_path, encoding="utf-8") as handle:
            previous = json.load(handle)
        repeated = time.time() - float(previous.get("at", 0)) < REPEAT_WINDOW_S
    except (OSError, ValueError, TypeError, AttributeError):
        repeated = False
    if repeated:
        suggestion = (
            f"It was rebuilt once and is still broken: remove {venv} and check the Python it is built from."
        )
    else:
        try:
            with open(record_path, "w", encoding="utf-8") as handle:
                json.dump({"at": time.time(), "cause": cause}, handle)
            os.unlink(os.path.join(venv, STAMP_NAME))
        except OSError:
            pass
        suggestion = "fixloop rebuilds it on the next command; run it again."
    return _document(cause, f"fixloop's environment at {venv} is broken. {suggestion}")


def _document(cause: str, suggestion: str) -> dict[str, object]:
    return {
        "status": "failed",
        "error": {
            "code": "ENGINE_BROKEN",
            "message": f"A dependency of the engine does not load ({cause}).",
            "suggestion": suggestion,
        },
    }


def fail_broken(error: BaseException) -> NoReturn:
    sys.stdout.write(json.dumps(broken_document(error), ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()
    raise SystemExit(EXIT_CODE)


def fail_internal(error: BaseException) -> NoReturn:
    """A fault in fixloop's own code before the CLI could load: JSON, no traceback."""
    document = {
        "status": "failed",
        "error": {"code": "INTERNAL_ERROR", "message": f"{type(error).__name__}: {error}"},
    }
    sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()
    raise SystemExit(70)
