"""Run ids: 8 lowercase hex characters, shared by the run state, the logs and the session index."""

from __future__ import annotations

from fixloop.core.errors import FixloopError

RUN_ID_LENGTH = 8
_HEX_DIGITS = frozenset("0123456789abcdef")


def new_run_id() -> str:
    import secrets  # imported here: hooks import this module and rarely need a new id

    return secrets.token_hex(RUN_ID_LENGTH // 2)


def is_run_id(value: object) -> bool:
    # Plain string checks, not a regular expression: hooks would pay for importing `re`.
    return isinstance(value, str) and len(value) == RUN_ID_LENGTH and _HEX_DIGITS.issuperset(value)


def check_run_id(value: object) -> str:
    if not isinstance(value, str) or not is_run_id(value):
        raise FixloopError(
            "INVALID_RUN_ID",
            f"Invalid run id {value!r}: expected 8 lowercase hex characters.",
            received=value if isinstance(value, str) else repr(value),
        )
    return value
