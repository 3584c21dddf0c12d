"""How every engine command answers: one JSON document on stdout, never a traceback.

Standard library only: `fixloop record` as the SubagentStop hook calls it answers without loading click
(fixloop.workflows.hook_record); every other command comes through click (fixloop.cli).
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from fixloop.core.errors import FixloopError

R = TypeVar("R")


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()


def fail(error: FixloopError) -> NoReturn:
    print_json(error.to_document())
    raise SystemExit(error.exit_code)


def replace_undecodable_output() -> None:
    """Arguments are decoded with surrogateescape: a byte that is not UTF-8 must not reach stdout raw."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")


def _click_signal(error: BaseException) -> bool:
    """Whether `error` is click's own way out (an exit, a usage error, an abort): click handles those."""
    click = sys.modules.get("click")
    if click is None:
        return False
    return isinstance(error, (click.exceptions.Exit, click.ClickException, click.Abort))


def guarded(action: Callable[[], R]) -> R:
    """Run `action`; turn FixloopError and any unexpected exception into a JSON error document and a
    non-zero exit. The one error wrapper of every command (cli.LazyGroup.invoke, workflows.hook_record)."""
    try:
        return action()
    except FixloopError as error:
        fail(error)
    except (SystemExit, KeyboardInterrupt):
        raise
    except Exception as error:  # the CLI contract: no traceback ever reaches a caller
        if _click_signal(error):
            raise
        if isinstance(error, ImportError):
            from fixloop.core.broken_env import fail_broken, is_dependency_failure

            if not is_dependency_failure(error):  # fixloop's own code: a fault, not the environment
                fail(FixloopError("INTERNAL_ERROR", f"{type(error).__name__}: {error}", exit_code=70))
            fail_broken(error)
        if isinstance(error, OSError):
            fail(FixloopError("IO_ERROR", f"{error.strerror or error}: {error.filename or ''}".strip(": ")))
        fail(FixloopError("INTERNAL_ERROR", f"{type(error).__name__}: {error}", exit_code=70))
