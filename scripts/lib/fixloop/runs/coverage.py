"""What a run reviewed of its change and what it did not, and why, from its state: the files handed to the
reviewers, and each file left out with its reason (the report, SARIF and the final message show it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

EXCLUDED = "excluded"
NAME_NOT_UTF8 = "name_not_utf8"
# Why a changed file was not reviewed, in words, by code (binary and generated: runs.unreviewable).
REASON_WORDS = {
    "binary": "binary",
    "generated": "generated",
    EXCLUDED: "excluded by review_include/review_exclude",
    NAME_NOT_UTF8: "name not UTF-8",
}


def not_reviewed(state: Mapping[str, Any]) -> list[dict[str, str]]:
    """Every changed file the run left out, as {"file", "code", "reason"}, sorted by file."""
    found: list[dict[str, str]] = []
    for name in state.get("files_left_out") or []:
        found.append(
            {"file": str(name), "code": EXCLUDED, "reason": "left out by review_include/review_exclude"}
        )
    for item in state.get("files_not_reviewable") or []:
        if isinstance(item, Mapping):
            found.append(
                {"file": str(item.get("file")), "code": NAME_NOT_UTF8, "reason": str(item.get("reason"))}
            )
    for item in state.get("files_skipped") or []:
        if isinstance(item, Mapping):
            found.append(
                {
                    "file": str(item.get("file")),
                    "code": str(item.get("code")),
                    "reason": str(item.get("reason")),
                }
            )
    return sorted(found, key=lambda item: item["file"])


def coverage(state: Mapping[str, Any]) -> dict[str, Any]:
    """The counts (changed_files, reviewed_files, not_reviewed_by_reason) and the lists (reviewed: the
    files handed to the reviewers; not_reviewed: each file left out, with its reason), and what each
    reviewer covered (by_reviewer: reviewer_coverage)."""
    reviewed = sorted(str(name) for name in state.get("changed_files") or [])
    return {**coverage_of(reviewed, not_reviewed(state)), "by_reviewer": reviewer_coverage(state)}


def coverage_of(reviewed: list[str], left_out: list[dict[str, Any]]) -> dict[str, Any]:
    """The coverage document of the files `reviewed` and those `left_out` (each with its `code`): the
    lists as given, and their counts, the left-out files counted by code."""
    by_reason: dict[str, int] = {}
    for item in left_out:
        by_reason[item["code"]] = by_reason.get(item["code"], 0) + 1
    return {
        "changed_files": len(reviewed) + len(left_out),
        "reviewed_files": len(reviewed),
        "reviewed": reviewed,
        "not_reviewed": left_out,
        "not_reviewed_by_reason": dict(sorted(by_reason.items())),
    }


def not_reviewed_lines(state: Mapping[str, Any]) -> list[str]:
    """The final message's sentence when changed files were left out of the review (else none)."""
    doc = coverage(state)
    if not doc["not_reviewed"]:
        return []
    parts = ", ".join(
        f"{count} {REASON_WORDS.get(code, code)}" for code, count in doc["not_reviewed_by_reason"].items()
    )
    return [
        f"Not reviewed: {len(doc['not_reviewed'])} of {doc['changed_files']} changed file(s) ({parts}); "
        f"{doc['reviewed_files']} reviewed. The report's coverage names them."
    ]


def reviewer_coverage(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """How the first review round (the one over the whole change) reached each reviewer: the shards it was
    cut into and, per reviewer, the files it reviewed and those it did not (its failed shards, or every
    file when it failed outright). None before that round closed."""
    review = state.get("review")
    rounds = review.get("rounds") if isinstance(review, Mapping) else None
    first = rounds[0] if isinstance(rounds, list) and rounds else None
    if not isinstance(first, Mapping) or not first.get("closed"):
        return None
    scope = [str(name) for name in first.get("scope") or []]
    unreviewed: Mapping[str, Any] = first.get("unreviewed") or {}
    reviewers: dict[str, dict[str, Any]] = {}
    for item in first.get("agents_results") or []:
        agent = str(item.get("agent"))
        if agent in unreviewed:
            missed = [str(name) for name in unreviewed[agent]]
        else:
            missed = [] if item.get("status") == "success" else scope
        reviewers[agent] = {"reviewed": len(scope) - len(missed), "not_reviewed": missed}
    shards = first.get("shards") or []
    return {"files": len(scope), "shards": max(1, len(shards)), "reviewers": reviewers}


def merge_reviewer_coverage(parts: Sequence[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """One by_reviewer document of several runs' (the shards of a CI matrix), as one run over all their
    files would give it; None when no run has one."""
    present = [part for part in parts if part]
    if not present:
        return None
    reviewers: dict[str, dict[str, Any]] = {}
    for part in present:
        for agent, item in (part.get("reviewers") or {}).items():
            entry = reviewers.setdefault(str(agent), {"reviewed": 0, "not_reviewed": []})
            entry["reviewed"] += int(item.get("reviewed") or 0)
            entry["not_reviewed"] = sorted([*entry["not_reviewed"], *(item.get("not_reviewed") or [])])
    return {
        "files": sum(int(part.get("files") or 0) for part in present),
        "shards": sum(int(part.get("shards") or 1) for part in present),
        "reviewers": dict(sorted(reviewers.items())),
    }


def reviewer_sentences(by_reviewer: Mapping[str, Any] | None) -> list[str]:
    """The report's words on how the change reached the reviewers: the shards, and each reviewer that did
    not see every file, with how many it missed."""
    if not by_reviewer:
        return []
    files, shards = int(by_reviewer["files"]), int(by_reviewer["shards"])
    reviewers: Mapping[str, Any] = by_reviewer["reviewers"]
    missed = {agent: item for agent, item in reviewers.items() if item["not_reviewed"]}
    where = f"in {shards} shards" if shards > 1 else "in one call each"
    if not missed:
        return [f"Reviewed {where}: each of the {len(reviewers)} reviewers saw all {files} file(s)."]
    saw = len(reviewers) - len(missed)
    lines = [f"Reviewed {where}; {saw} of {len(reviewers)} reviewers saw every file."]
    for agent, item in sorted(missed.items()):
        count = len(item["not_reviewed"])
        lines.append(f"{agent} did not review {count} of {files} file(s) (its call failed).")
    return lines
