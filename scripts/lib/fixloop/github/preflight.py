"""The checks before fixloop touches a pull request's review: gh, its login, the remote, the PR itself."""

from __future__ import annotations

from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.github.gh import INSTALL_HINT, Gh
from fixloop.github.pulls import check_auth, checkout_repository, parse_reference, view_pull_request


def require_gh(gh: Gh) -> None:
    """GH_UNAVAILABLE, with where to get it, unless gh is on the PATH."""
    if gh.executable() is None:
        raise FixloopError(
            "GH_UNAVAILABLE",
            f"The GitHub CLI `gh` is not installed (or not on PATH). {INSTALL_HINT}",
            suggestion="https://cli.github.com",
        )


def preflight(gh: Gh, reference: str, current_branch: str | None) -> dict[str, Any]:
    """The open pull request `reference` names, whose head branch is checked out; else FixloopError:
    INVALID_PR_REFERENCE, GH_UNAVAILABLE, GH_AUTH_REQUIRED, NO_GITHUB_REMOTE, PR_NOT_FOUND, PR_NOT_OPEN or
    PR_BRANCH_MISMATCH, each with the command that fixes it (`suggestion`)."""
    ref = parse_reference(reference)
    require_gh(gh)
    check_auth(gh)
    repository = checkout_repository(gh)
    pr = view_pull_request(gh, ref)
    number = pr["number"]
    if pr["state"] != "OPEN":
        raise FixloopError(
            "PR_NOT_OPEN",
            f"Pull request #{number} is {pr['state'].lower()}; fixloop answers the review of open pull "
            f"requests: reopen it with `gh pr reopen {number}` or name an open one.",
            suggestion=f"gh pr reopen {number}",
            state=pr["state"],
        )
    if current_branch != pr["head_ref"]:
        here = current_branch or "a detached HEAD"
        raise FixloopError(
            "PR_BRANCH_MISMATCH",
            f"The checkout is on {here}, not on pull request #{number}'s branch {pr['head_ref']}: "
            f"run `gh pr checkout {number}` first.",
            suggestion=f"gh pr checkout {number}",
            current_branch=current_branch,
            head_ref=pr["head_ref"],
        )
    return {**pr, "repository": repository["name_with_owner"]}
