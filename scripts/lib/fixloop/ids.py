"""Run ids: 8 lowercase hex characters, shared by the run state, the logs and the session index."""

from __future__ import annotations

import re

from fixloop.errors import FixloopError

RUN_ID_PATTERN = re.compile(r"[0-9a-f]{8}")


def new_run_id() -> str:
    import secrets  # imported here: hooks import this module and rarely need a new id

    return secrets.token_hex(4)


def is_run_id(value: object) -> bool:
    return isinstance(value, str) and RUN_ID_PATTERN.fullmatch(value) is not None


def check_run_id(value: object) -> str:
    if not isinstance(value, str) or not is_run_id(value):
        raise FixloopError(
            "INVALID_RUN_ID",
            f"Invalid run id {value!r}: expected 8 lowercase hex characters.",
            received=value if isinstance(value, str) else repr(value),
        )
    return value
