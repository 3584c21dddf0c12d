"""What a /fixloop:review run diffs against, and why: the base the user named, the last review, or the
branch's merge base.

- `--since REF`: the changes since REF. For a branch that moved on since this one forked from it, that is
  the merge base (what `git diff REF...HEAD` shows), never REF's own newer commits reverted.
- Otherwise, on a branch reviewed before: the changes since the commit the last ended review of this
  branch started from (runs.reviewed), when it is still in HEAD's history. After a rebase or a force-push
  it is not, and the review falls back to the full diff.
- The full diff: against the merge base with the branch this one is based on (its upstream when that is
  another branch, else the remote's default branch, main or master). With none, the work tree against
  HEAD.

Uncommitted changes (staged, unstaged, untracked) are always part of the review (store.gitfiles).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fixloop.runs import reviewed
from fixloop.store import gitfiles

SHORT = 12
BASE_BRANCHES = ("main", "master", "origin/main", "origin/master")
REASONS = ("since", "last_review", "history_rewritten", "merge_base", "head", "no_commits")


@dataclass(frozen=True)
class ReviewBase:
    diff_base: str  # what the changed files are diffed against: a commit id, or "" for HEAD
    reason: str  # one of REASONS
    message: str  # the sentence the user reads
    branch: str | None = None
    head: str | None = None  # HEAD's commit when the run started
    since: str | None = None  # REF as the user typed it
    base_branch: str | None = None  # the branch whose merge base is diffed against
    last_review_run: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _git_text(root: Path, *args: str) -> str | None:
    result = gitfiles.run_git(root, *args, check=False)
    if result.returncode != 0:
        return None
    return result.stdout.decode("utf-8", "replace").strip() or None


def head_commit(root: Path) -> str | None:
    return _git_text(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")


def branch_name(root: Path) -> str | None:
    """The checked-out branch, None when HEAD is detached."""
    return _git_text(root, "symbolic-ref", "--quiet", "--short", "HEAD")


def merge_base(root: Path, commit: str, other: str = "HEAD") -> str | None:
    return _git_text(root, "merge-base", commit, other)


def is_ancestor(root: Path, commit: str, head: str) -> bool:
    return gitfiles.run_git(root, "merge-base", "--is-ancestor", commit, head, check=False).returncode == 0


def _commit_of(root: Path, ref: str) -> str | None:
    return _git_text(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")


def _short(commit: str) -> str:
    return commit[:SHORT]


def _base_branch_candidates(root: Path, branch: str | None) -> list[str]:
    names: list[str] = []
    upstream = _git_text(root, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
    # A branch's own remote copy is no base: after a force-push it is HEAD itself.
    if upstream and upstream.split("/", 1)[-1] != branch:
        names.append(upstream)
    remote_default = _git_text(root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    if remote_default:
        names.append(remote_default)
    names.extend(BASE_BRANCHES)
    return [name for name in dict.fromkeys(names) if name != branch]


def base_branch(root: Path, branch: str | None) -> tuple[str, str] | None:
    """(branch, merge base with HEAD) of the first base branch that exists and shares history with HEAD."""
    for name in _base_branch_candidates(root, branch):
        if _commit_of(root, name) is None:
            continue
        found = merge_base(root, name)
        if found is not None:
            return name, found
    return None


def since_base(root: Path, ref: str) -> ReviewBase:
    """The base of `--since REF` (INVALID_GIT_BASE when REF names no commit)."""
    commit = gitfiles.check_base(root, ref)
    head = head_commit(root)
    branch = branch_name(root)
    found = merge_base(root, commit) if head is not None else None
    if found is None or found == commit:
        message = f"Reviewing the changes since {ref} ({_short(commit)}) and the uncommitted changes."
        return ReviewBase(commit, "since", message, branch, head, since=ref)
    message = (
        f"Reviewing the changes since this branch forked from {ref} (merge base {_short(found)}) and the "
        "uncommitted changes."
    )
    return ReviewBase(found, "since", message, branch, head, since=ref, base_branch=ref)


def _full_diff(root: Path, branch: str | None, head: str, why: str, reason: str) -> ReviewBase:
    found = base_branch(root, branch)
    if found is None:
        message = (
            f"{why} No base branch found (no upstream, main or master): reviewing the uncommitted changes."
        )
        return ReviewBase("", "head" if reason == "merge_base" else reason, message, branch, head)
    name, commit = found
    message = (
        f"{why} Reviewing the full diff against {name} (merge base {_short(commit)}) and the uncommitted "
        "changes."
    )
    return ReviewBase(commit, reason, message, branch, head, base_branch=name)


def automatic_base(root: Path) -> ReviewBase:
    """The base of a review the user gave no `--since` to."""
    head = head_commit(root)
    branch = branch_name(root)
    if head is None:
        return ReviewBase(
            "", "no_commits", "No commit yet: reviewing every staged and untracked file.", branch
        )
    if branch is None:
        return _full_diff(
            root, None, head, "HEAD is detached (no branch to remember reviews of).", "merge_base"
        )
    last = reviewed.last_review(root, branch)
    if last is None:
        return _full_diff(root, branch, head, f"No earlier fixloop review of branch {branch}.", "merge_base")
    if _commit_of(root, last.commit) is not None and is_ancestor(root, last.commit, head):
        message = (
            f"Reviewing the changes since the last fixloop review of branch {branch} (run {last.run_id}, "
            f"commit {_short(last.commit)}) and the uncommitted changes."
        )
        return ReviewBase(last.commit, "last_review", message, branch, head, last_review_run=last.run_id)
    why = (
        f"The commit of the last review of branch {branch} ({_short(last.commit)}, run {last.run_id}) is no "
        "longer in its history (rebased or force-pushed)."
    )
    rewritten = _full_diff(root, branch, head, why, "history_rewritten")
    return ReviewBase(**{**rewritten.to_json(), "last_review_run": last.run_id})
