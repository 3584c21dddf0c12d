"""`fixloop review publish RUN --pr N`: a run's remaining findings on the pull request, never twice.

Reads the pull request (gh only: github.pulls, github.threads, github.pr_writes), decides what to post
(workflows.publish.plan), then writes: one review with the new inline comments, one reply per fixed
thread (resolved when `pr_resolve_threads` is on), the check on the head commit and the summary comment
(created once, then edited in place only when what it says changed). Dismissals go to the baseline first, so a
dismissed finding is never posted. Each failure is logged (ERROR with its code) and raised.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.github.comments import same_account
from fixloop.github.diffmap import DiffMap
from fixloop.github.gh import Gh
from fixloop.github.pr_writes import (
    changed_files,
    comment_reactions,
    create_issue_comment,
    issue_comments,
    post_review,
    set_check,
    update_issue_comment,
)
from fixloop.github.preflight import require_gh
from fixloop.github.publish_body import fixed_marker, summary_key_of
from fixloop.github.pulls import check_auth, parse_reference, view_pull_request, viewer_login
from fixloop.github.rest import Rest
from fixloop.github.thread_resolvers import resolvers
from fixloop.github.threads import fetch_threads, reply_to_thread, resolve_thread
from fixloop.review.access import started_review
from fixloop.review.rounds import review_scope
from fixloop.review.views import final_round
from fixloop.runs.baseline import add_dismissals, load_baseline
from fixloop.runs.lifecycle import load_run, run_log
from fixloop.workflows.publish.plan import Plan, make_plan, own_threads
from fixloop.workflows.publish.summary import conclusion, failing, summary_body

FIXED_REPLY = "Fixed: fixloop no longer finds this in the latest review."
Json = dict[str, Any]


def _remaining(state: Mapping[str, Any]) -> list[Json]:
    review = started_review(state)
    final = final_round(review) if review is not None else None
    return [dict(issue) for issue in (final["issues"] if final is not None else [])]


def _reader(root: Path) -> Callable[[str], list[str] | None]:
    def read(path: str) -> list[str] | None:
        target = (root / path).resolve()
        if not target.is_relative_to(root.resolve()) or not target.is_file():
            return None
        try:
            return target.read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            return None

    return read


def _skipped(diff: DiffMap, reviewed: list[str]) -> dict[str, str]:
    skipped: dict[str, str] = {}
    for name, status in diff.status.items():
        if name in reviewed:
            continue
        if status == "removed":
            continue
        skipped[name] = "outside the run's review scope (path filters, or not changed in the run)"
    for name in reviewed:
        if name in diff.lines and not diff.lines[name]:
            skipped[name] = "GitHub shows no diff for it (binary or too large): findings go to the summary"
    return skipped


def _open_pull_request(gh: Gh, text: str) -> dict[str, Any]:
    require_gh(gh)
    check_auth(gh)
    pr = view_pull_request(gh, parse_reference(text))
    if pr["state"] != "OPEN":
        raise FixloopError(
            "PR_NOT_OPEN",
            f"Pull request #{pr['number']} is {pr['state'].lower()}: fixloop publishes reviews on open "
            "pull requests only.",
            state=pr["state"],
        )
    return pr


def _post_review(rest: Rest, pr: Mapping[str, Any], plan: Plan, log: Any) -> int:
    """Post the plan's inline comments as one review; when GitHub refuses a line (the diff moved since the
    diff was read), read the diff again, move those findings to the summary and post once more."""
    if not plan.inline:
        return 0
    body = f"fixloop found {len(plan.inline)} new finding(s) on this pull request."
    try:
        post_review(rest, pr, pr["head_oid"], body, [comment for _issue, comment in plan.inline])
    except FixloopError as error:
        if error.code != "GITHUB_VALIDATION_FAILED":
            raise
        diff = DiffMap(changed_files(rest, pr))
        gone = [
            (issue, c)
            for issue, c in plan.inline
            if not diff.covers(c["path"], int(c.get("start_line") or c["line"]), c["line"])
        ]
        if not gone:
            raise
        warning = {
            "code": "DIFF_LINE_GONE",
            "message": f"{len(gone)} finding(s) point at lines the pull request's diff no longer shows; "
            "they go into the summary.",
        }
        log.emit("W", "WARNING", **warning)
        plan.warnings.append(warning)
        plan.outside_diff += [issue for issue, _c in gone]
        plan.inline = [item for item in plan.inline if item not in gone]
        if plan.inline:
            post_review(rest, pr, pr["head_oid"], body, [comment for _issue, comment in plan.inline])
    return len(plan.inline)


@dataclass
class RunFacts:
    """What a publish needs of a run: its remaining findings, the files it reviewed, its status, usage,
    config, and its event log."""

    run_id: str
    issues: list[Json]
    reviewed: list[str]
    status: str
    usage: Mapping[str, Any] | None
    config: Mapping[str, Any]
    log: Any


def facts_of(state: Mapping[str, Any]) -> RunFacts:
    review = started_review(state)
    outcome: Mapping[str, Any] = (review.get("outcome") if review is not None else None) or {}
    config = state.get("config")
    usage = state.get("usage")
    return RunFacts(
        run_id=str(state.get("run_id")),
        issues=_remaining(state),
        reviewed=review_scope(state),  # type: ignore[arg-type]
        status=str(outcome.get("status") or state.get("status") or "unknown"),
        usage=usage if isinstance(usage, dict) else None,
        config=config if isinstance(config, dict) else {},
        log=run_log(state),
    )


def publish(
    root: Path,
    run_id: str,
    pr_text: str,
    *,
    fail_on: str | None = None,
    dry_run: bool = False,
    report_url: str | None = None,
) -> dict[str, Any]:
    """Publish run `run_id` on the pull request `pr_text` names (see the module)."""
    facts = facts_of(load_run(root, run_id))
    return publish_facts(root, facts, pr_text, fail_on=fail_on, dry_run=dry_run, report_url=report_url)


def publish_facts(
    root: Path,
    facts: RunFacts,
    pr_text: str,
    *,
    fail_on: str | None = None,
    dry_run: bool = False,
    gh: Gh | None = None,
    sleep: Callable[[float], None] = time.sleep,
    report_url: str | None = None,
) -> dict[str, Any]:
    try:
        answer = _publish(root, facts, pr_text, fail_on, dry_run, gh or Gh(root), sleep, report_url)
    except FixloopError as error:
        facts.log.emit("E", "ERROR", code=error.code, message=error.message, recoverable=True)
        raise
    facts.log.emit("I", "DATA_COLLECTED", data_type="pr_publish", summary=answer)
    return answer


def _publish(
    root: Path,
    facts: RunFacts,
    pr_text: str,
    fail_on: str | None,
    dry_run: bool,
    gh: Gh,
    sleep: Callable[[float], None],
    report_url: str | None,
) -> dict[str, Any]:
    config, log, issues, reviewed = facts.config, facts.log, facts.issues, facts.reviewed
    pr = _open_pull_request(gh, pr_text)
    viewer = viewer_login(gh, pr.get("host"))
    rest = Rest(gh, pr.get("host"), sleep=sleep)
    diff = DiffMap(changed_files(rest, pr))
    threads, _requests = fetch_threads(gh, pr)
    own = own_threads(threads, viewer)
    resolved = [thread.thread_id for thread in own if thread.is_resolved and not thread.fixed_replied]
    who = resolvers(gh, pr.get("host"), resolved) if resolved else {}
    for thread in own:
        thread.resolved_by = who.get(thread.thread_id)
    thumbs = {
        thread.thread_id: [
            item for item in comment_reactions(rest, pr, thread.comment_id) if item.get("content") == "-1"
        ]
        for thread in own
        if thread.comment_id is not None and not thread.is_resolved
    }
    baselined = frozenset(entry["fingerprint"] for entry in load_baseline(root))
    plan = make_plan(issues, config, diff, own, reviewed, _reader(root), thumbs, baselined)
    dismissed_prints = {d.issue.get("fingerprint") for d in plan.dismissed}
    remaining = [issue for issue in issues if issue.get("fingerprint") not in dismissed_prints]
    check = {"conclusion": conclusion(remaining, fail_on), "commit": pr["head_oid"]}
    status = facts.status
    skipped = _skipped(diff, reviewed)
    usage = facts.usage

    def build() -> str:
        return summary_body(
            status=status,
            issues=remaining,
            plan=plan,
            reviewed=reviewed,
            skipped=skipped,
            check=check,
            usage=usage,
            report_url=report_url,
        )

    summary = build()
    existing = [
        item
        for item in issue_comments(rest, pr)
        if summary_key_of(str(item.get("body") or "")) is not None
        and same_account(str((item.get("user") or {}).get("login") or ""), viewer)
    ]
    summary_changed = not existing or summary_key_of(str(existing[0]["body"])) != summary_key_of(summary)
    answer: dict[str, Any] = {
        "pr": pr["number"],
        "commit": pr["head_oid"],
        "dry_run": dry_run,
        "inline_comments": [
            {"path": c["path"], "line": c["line"], "id": i.get("id")} for i, c in plan.inline
        ],
        "outside_diff": [issue.get("id") for issue in plan.outside_diff],
        "already_posted": [issue.get("id") for issue in plan.already_posted],
        "fixed_threads": [thread.thread_id for thread in plan.fixed],
        "dismissed": [{"id": d.issue.get("id"), "reason": d.reason, "by": d.author} for d in plan.dismissed],
        "left_out": plan.left_out,
        "summary": "unchanged" if not summary_changed else ("updated" if existing else "created"),
        "check": check["conclusion"],
        "failing": [issue.get("id") for issue in failing(remaining, fail_on)],
    }
    if dry_run:
        answer["summary_body"] = summary
        return answer
    if plan.dismissed:
        add_dismissals(root, facts.run_id, [(d.issue, d.reason, d.author, d.at) for d in plan.dismissed])
    planned = len(plan.inline)
    _post_review(rest, pr, plan, log)
    if len(plan.inline) != planned:  # lines gone from the diff: their findings moved to the summary
        answer["inline_comments"] = [
            {"path": c["path"], "line": c["line"], "id": i.get("id")} for i, c in plan.inline
        ]
        answer["outside_diff"] = [issue.get("id") for issue in plan.outside_diff]
        summary = build()
        summary_changed = True
    answer["warnings"] = plan.warnings
    for thread in plan.fixed:
        reply_to_thread(
            gh, pr.get("host"), thread.thread_id, f"{FIXED_REPLY}\n\n{fixed_marker(thread.fingerprint)}"
        )
        if config.get("pr_resolve_threads") is True and not thread.is_resolved:
            resolve_thread(gh, pr.get("host"), thread.thread_id)
    if summary_changed:
        # The check first: the summary records what was published, so a publish that fails before it
        # (a rate limit) leaves the summary as it was and the next publish sets the check again.
        title = f"{len(remaining)} finding(s) remaining"
        answer["check_kind"] = set_check(rest, pr, pr["head_oid"], check["conclusion"], title, title)
        if existing:
            update_issue_comment(rest, pr, int(existing[0]["id"]), summary)
        else:
            create_issue_comment(rest, pr, summary)
    answer["write_requests"] = rest.writes + len(plan.fixed)
    return answer


def perform_publish(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Any) -> dict[str, Any]:
    """The engine's "publish" work at the end of `/fixloop:review --pr`: {"answer"} or {"error"} (code and
    message), so the phase can end the run with the error's code."""
    try:
        answer = publish_facts(
            root,
            facts_of(state),
            str(params.get("pr") or ""),
            fail_on=params.get("fail_on"),
        )
    except FixloopError as error:
        return {"error": {"code": error.code, "message": error.message}}
    return {"answer": answer}
