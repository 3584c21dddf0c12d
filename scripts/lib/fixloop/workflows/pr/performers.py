"""The engine work of fix-pr-review, done outside the state lock: gh calls, the commit, the summary comment.

A performer never raises for GitHub's or git's refusal: it returns {"ok": false, "code", "message"} and
the phase decides. `register()` adds them to the engine's work kinds (workflows.work).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.github import markers, pulls
from fixloop.github import threads as gh_threads
from fixloop.github.comments import is_own
from fixloop.github.gh import Gh
from fixloop.github.preflight import preflight
from fixloop.runs.lifecycle import Clock
from fixloop.store import gitfiles
from fixloop.workflows import work
from fixloop.workflows.pr import posting
from fixloop.workflows.pr.commit import commit_files

PREFLIGHT = "pr-preflight"
FETCH = "pr-fetch"
COMMIT = "pr-commit"
POST = "pr-post"
SUMMARY = "pr-summary"
VIEWER = "pr-viewer"


def failure(error: FixloopError) -> dict[str, Any]:
    return {"ok": False, "code": error.code, "message": error.message, "details": dict(error.details)}


def project_of(state: dict[str, Any]) -> Path:
    return Path(str(state["project_dir"]))


def _preflight(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    """The pull request, checked (github.preflight), and the login of the account gh acts as there."""
    project = project_of(state)
    gh = Gh(project)
    try:
        pr = preflight(gh, str(params.get("pr") or ""), gitfiles.current_branch(project))
        return {"ok": True, "pr": pr, "viewer": pulls.viewer_login(gh, pr.get("host"))}
    except FixloopError as error:
        return failure(error)


def _viewer(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    try:
        return {"ok": True, "login": pulls.viewer_login(Gh(project_of(state)), params.get("host"))}
    except FixloopError as error:
        return failure(error)


def _fetch(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    gh = Gh(project_of(state))
    pr = params["pr"]
    try:
        threads, requests = gh_threads.fetch_threads(gh, pr)
        reviews = gh_threads.fetch_reviews(gh, pr)
        conversation = gh_threads.fetch_conversation(gh, pr)
    except FixloopError as error:
        return failure(error)
    return {
        "ok": True,
        "threads": threads,
        "reviews": reviews,
        "conversation": conversation,
        "pages": requests,
    }


def _commit(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    try:
        return {"ok": True, **commit_files(project_of(state), params["files"], params["message"])}
    except FixloopError as error:
        return failure(error)


def _summary(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    """Post the run's summary comment once: a comment by the run's gh account (`viewer`) that carries this
    run's summary marker is kept; the marker in anyone else's comment is not the summary."""
    gh = Gh(project_of(state))
    pr = params["pr"]
    marker = markers.summary_marker(str(state["run_id"]))
    try:
        viewer = str(params.get("viewer") or "") or pulls.viewer_login(gh, pr.get("host"))
        for item in gh_threads.fetch_conversation(gh, pr):
            if item.get("marker") == marker and is_own(item, viewer):
                return {"ok": True, "url": item.get("url"), "found": True}
        url = pulls.comment_on_pull_request(gh, str(pr["url"]), markers.with_marker(params["body"], marker))
    except FixloopError as error:
        return failure(error)
    return {"ok": True, "url": url, "found": False}


def register() -> None:
    work.register(PREFLIGHT, _preflight)
    work.register(FETCH, _fetch)
    work.register(COMMIT, _commit)
    work.register(POST, posting.post_replies)
    work.register(SUMMARY, _summary)
    work.register(VIEWER, _viewer)
