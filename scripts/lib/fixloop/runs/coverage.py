"""What a run reviewed of its change and what it did not, and why, from its state: the files handed to the
reviewers, and each file left out with its reason (the report, SARIF and the final message show it)."""

from __future__ import annotations

from collections.abc import Mapping
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
    files handed to the reviewers; not_reviewed: each file left out, with its reason)."""
    return coverage_of(sorted(str(name) for name in state.get("changed_files") or []), not_reviewed(state))


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
