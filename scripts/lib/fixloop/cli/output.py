"""How every CLI command prints its answer: one JSON document on stdout (or a document meant for people,
such as a Markdown report), never a traceback."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from fixloop.core.errors import FixloopError

R = TypeVar("R")


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()


def print_text(text: str) -> None:
    """A document that is not JSON (a Markdown or HTML report, a summary for people), as it is."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def fail(error: FixloopError) -> NoReturn:
    print_json(error.to_document())
    raise SystemExit(error.exit_code)


def guarded(action: Callable[[], R]) -> R:
    """Run `action`; turn FixloopError and any unexpected exception into a JSON error document and a
    non-zero exit. The one error wrapper of every command (cli.LazyGroup.invoke)."""
    try:
        return action()
    except FixloopError as error:
        fail(error)
    except (SystemExit, KeyboardInterrupt, click.exceptions.Exit, click.ClickException, click.Abort):
        raise
    except ImportError as error:
        from fixloop.core.broken_env import fail_broken, is_dependency_failure

        if not is_dependency_failure(error):  # fixloop's own code: a fault, not the environment
            fail(FixloopError("INTERNAL_ERROR", f"{type(error).__name__}: {error}", exit_code=70))
        fail_broken(error)
    except OSError as error:
        fail(FixloopError("IO_ERROR", f"{error.strerror or error}: {error.filename or ''}".strip(": ")))
    except Exception as error:  # the CLI contract: no traceback ever reaches a caller
        fail(FixloopError("INTERNAL_ERROR", f"{type(error).__name__}: {error}", exit_code=70))
