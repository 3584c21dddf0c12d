"""What a publish posts, decided from the run's findings and what the pull request already holds.

A finding is "already posted" when one of fixloop's own inline comments (its marker, written by the
account fixloop acts as) names the same finding: the same fingerprint, or the same finding by
review.identity (a push moved it a few lines). Only the other findings are posted; a finding on a line the
diff does not show goes into the summary. A thread of fixloop whose finding is gone from a reviewed file
is fixed: it gets one reply (never a second). A thread whose finding is still there but that a person
resolved, answered with a dismissal word, or gave a 👎, is a dismissal: the finding goes to the baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fixloop.contracts.runconfig import DISMISSAL_WORDS
from fixloop.github.comments import is_own, same_account
from fixloop.github.diffmap import DiffMap
from fixloop.github.publish_body import description_of, finding_body, finding_of, fixed_of, replaceable
from fixloop.review.filters import SEVERITY_RANK
from fixloop.review.identity import Candidate, same_finding
from fixloop.workflows.publish.severity import severity_of

MAX_REASON_CHARS = 300
Json = dict[str, Any]


@dataclass
class OwnThread:
    """A review thread fixloop opened for one finding."""

    thread_id: str
    fingerprint: str
    category: str
    path: str
    line: int
    description: str
    is_resolved: bool
    comment_id: int | None
    fixed_replied: bool
    replies: list[Json]
    resolved_by: str | None = None  # who resolved the thread, when asked (github.thread_resolvers)

    def candidate(self) -> Candidate:
        issue = {
            "file": self.path,
            "line": self.line,
            "category": self.category,
            "description": self.description,
        }
        return Candidate.of(issue)


@dataclass
class Dismissal:
    thread: OwnThread
    issue: Json
    reason: str
    author: str
    at: str | None


@dataclass
class Plan:
    inline: list[tuple[Json, Json]] = field(default_factory=list)  # (finding, review comment)
    outside_diff: list[Json] = field(default_factory=list)
    already_posted: list[Json] = field(default_factory=list)
    fixed: list[OwnThread] = field(default_factory=list)
    dismissed: list[Dismissal] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)
    warnings: list[dict[str, str]] = field(default_factory=list)  # {code, message} met while posting


def own_threads(threads: Sequence[Mapping[str, Any]], viewer: str) -> list[OwnThread]:
    found: list[OwnThread] = []
    for thread in threads:
        comments = list(thread.get("comments") or [])
        if not comments or not is_own(comments[0], viewer):
            continue
        named = finding_of(str(comments[0].get("body") or ""))
        if named is None:
            continue
        line = thread.get("line") or thread.get("original_line") or 1
        found.append(
            OwnThread(
                thread_id=str(thread["id"]),
                fingerprint=named[0],
                category=named[1],
                path=str(thread.get("path") or ""),
                line=int(line),
                description=description_of(str(comments[0].get("body") or "")),
                is_resolved=bool(thread.get("is_resolved")),
                comment_id=comments[0].get("database_id"),
                fixed_replied=any(
                    is_own(item, viewer) and fixed_of(str(item.get("body") or "")) for item in comments[1:]
                ),
                replies=[
                    item for item in comments[1:] if not same_account(str(item.get("author") or ""), viewer)
                ],
            )
        )
    return found


def _matching(issue: Mapping[str, Any], threads: Sequence[OwnThread]) -> OwnThread | None:
    candidate = Candidate.of(issue)
    for thread in threads:
        if thread.fingerprint == issue.get("fingerprint"):
            return thread
    for thread in threads:
        if same_finding(candidate, thread.candidate()):
            return thread
    return None


def _dismissal(
    thread: OwnThread, issue: Json, words: Sequence[str], thumbs_down: Sequence[Json]
) -> Dismissal | None:
    for reply in thread.replies:
        text = " ".join(str(reply.get("body") or "").split())
        if any(word.lower() in text.lower() for word in words):
            return Dismissal(
                thread, issue, text[:MAX_REASON_CHARS], str(reply.get("author")), reply.get("created_at")
            )
    if thumbs_down:
        first = thumbs_down[0]
        user = first.get("user")
        user = user if isinstance(user, dict) else {}
        return Dismissal(
            thread,
            issue,
            "a 👎 reaction on fixloop's comment",
            str(user.get("login")),
            first.get("created_at"),
        )
    if thread.is_resolved and not thread.fixed_replied:
        who = thread.resolved_by or (str(thread.replies[-1].get("author")) if thread.replies else "unknown")
        return Dismissal(thread, issue, "thread resolved without a fix", who, None)
    return None


def select(issues: Sequence[Json], config: Mapping[str, Any]) -> tuple[list[Json], dict[str, int]]:
    """The findings to publish under `min_severity` and `max_findings`, most severe first, and how many
    each rule left out."""
    floor = SEVERITY_RANK.get(str(config.get("min_severity") or "low"), 1)
    kept = [issue for issue in issues if SEVERITY_RANK[severity_of(issue)] >= floor]
    left_out: dict[str, int] = {}
    if len(kept) < len(issues):
        left_out["below_min_severity"] = len(issues) - len(kept)
    kept.sort(key=lambda issue: (-SEVERITY_RANK[severity_of(issue)], -int(issue.get("confidence") or 0)))
    limit = config.get("max_findings")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1 and len(kept) > limit:
        left_out["over_max_findings"] = len(kept) - limit
        kept = kept[:limit]
    return kept, left_out


def _review_comment(issue: Json, diff: DiffMap, read_lines: Callable[[str], list[str] | None]) -> Json | None:
    path, first = str(issue.get("file") or ""), int(issue.get("line") or 1)
    end = issue.get("end_line")
    last = end if isinstance(end, int) and not isinstance(end, bool) and end >= first else first
    if not diff.covers(path, first, last):
        if not diff.covers(path, first, first):
            return None
        last = first
    lines = read_lines(path)
    improved = issue.get("improved_code")
    fits = (
        isinstance(improved, str)
        and lines is not None
        and replaceable(issue.get("existing_code"), lines, first, last)
    )
    comment: Json = {
        "path": path,
        "line": last,
        "side": "RIGHT",
        "body": finding_body(issue, improved if fits else None),
    }
    if last > first:
        comment |= {"start_line": first, "start_side": "RIGHT"}
    return comment


def make_plan(
    issues: Sequence[Json],
    config: Mapping[str, Any],
    diff: DiffMap,
    threads: Sequence[OwnThread],
    reviewed_files: Sequence[str],
    read_lines: Callable[[str], list[str] | None],
    thumbs_down: Mapping[str, Sequence[Json]],
    baselined: frozenset[str] = frozenset(),
) -> Plan:
    """The plan for `issues` (the run's remaining findings) against the pull request's own threads; a
    thread whose fingerprint is in the baseline (`baselined`) was dismissed, never fixed."""
    words = [str(word) for word in config.get("pr_dismissal_words") or DISMISSAL_WORDS]
    plan = Plan()
    matched: set[str] = set()
    open_issues: list[Json] = []
    for issue in issues:
        thread = _matching(issue, [thread for thread in threads if thread.thread_id not in matched])
        if thread is None:
            open_issues.append(issue)
            continue
        matched.add(thread.thread_id)
        dismissal = _dismissal(thread, issue, words, thumbs_down.get(thread.thread_id, ()))
        if dismissal is not None:
            plan.dismissed.append(dismissal)
        else:
            plan.already_posted.append(issue)
    reviewed = set(reviewed_files)
    plan.fixed = [
        thread
        for thread in threads
        if thread.thread_id not in matched
        and thread.path in reviewed
        and not thread.fixed_replied
        and thread.fingerprint not in baselined
    ]
    chosen, plan.left_out = select(open_issues, config)
    for issue in chosen:
        comment = _review_comment(issue, diff, read_lines)
        if comment is None:
            plan.outside_diff.append(issue)
        else:
            plan.inline.append((issue, comment))
    return plan
