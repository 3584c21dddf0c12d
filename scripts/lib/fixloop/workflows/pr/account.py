"""The GitHub account fixloop acts as (gh's user), read once per run and kept in the record as `viewer`.

Only comments that account wrote count as fixloop's replies (fixloop.github.comments.is_own). A run that
starts after phase 0 (`--phase=6`) reads it at the first phase that needs it; it is never taken from an
earlier run, whose gh user may have been another account.
"""

from __future__ import annotations

from typing import Any

from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseFailed, Work
from fixloop.workflows.pr import performers
from fixloop.workflows.pr.filtering import Who
from fixloop.workflows.pr.record import pr_record


def who_of(ctx: PhaseContext, record: dict[str, Any], login: str = "") -> Who:
    """The accounts the run tells apart, as the configuration and the record say (`login`: gh's)."""
    return Who(
        pr_author=str((record.get("pr") or {}).get("author") or ""),
        viewer=login or str(record.get("viewer") or ""),
        include_bots=ctx.config.pr_include_bots,
        trusted=tuple(ctx.config.pr_trusted_associations),
    )


def viewer(ctx: PhaseContext) -> str | Outcome:
    """This run's gh login, or the work that reads it, or the failure to read it."""
    record = pr_record(ctx.state)
    login = record.get("viewer")
    if isinstance(login, str) and login:
        return login
    result: Any = ctx.work_result(performers.VIEWER)
    if result is None:
        return Work(performers.VIEWER, {"host": (record.get("pr") or {}).get("host")})
    ctx.forget_work(performers.VIEWER)
    if not result.get("ok"):
        code = str(result.get("code") or "GH_AUTH_REQUIRED")
        return PhaseFailed(
            code, str(result.get("message") or code), details=dict(result.get("details") or {})
        )
    login = str(result["login"])
    record["viewer"] = login
    return login
