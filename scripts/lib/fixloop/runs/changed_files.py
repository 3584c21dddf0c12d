"""A run's changed files: named by the user or taken from git, always inside the project."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.runs.baseline import BASELINE_FILE
from fixloop.runs.lifecycle import Clock, load_run, require_running, run_log, store_for
from fixloop.runs.path_filters import PathFilter
from fixloop.runs.unreviewable import split_unreviewable
from fixloop.store import gitfiles, layout

BASELINE_PATH = BASELINE_FILE.as_posix()
# fixloop's own files in a project, never reviewed: the baseline is data about reviews, and the config is
# fixloop's settings, whose commands gate the fixes (approved by the user, runs.trust) and are no change for
# the reviewers or the fixer. The config is runs.config.PROJECT_CONFIG (not imported: it loads pydantic).
OWN_FILES = frozenset({BASELINE_PATH, ".claude/fixloop.json"})


def normalize_files(root: Path, files: Sequence[str]) -> list[str]:
    """Project-relative POSIX paths of `files` (each must stay inside the project), sorted, no duplicates."""
    real_root = root.resolve()
    result: set[str] = set()
    for item in files:
        resolved = layout.resolve_inside(real_root, item)
        if resolved == real_root:
            raise FixloopError(
                "PATH_OUTSIDE_PROJECT",
                f"Refused path {item!r}: it names the project directory itself, not a file.",
                received=item,
                reason="project directory",
            )
        # Keep the name as given (a symlink stays a symlink) but normalised: join, then collapse `..`.
        given = Path(item)
        absolute = Path(os.path.normpath(given if given.is_absolute() else real_root / given))
        try:
            result.add(absolute.relative_to(real_root).as_posix())
        except ValueError:
            result.add(resolved.relative_to(real_root).as_posix())
    return sorted(result)


def review_path_filter(config: Mapping[str, Any]) -> PathFilter:
    """The path filters of a config (LoopConfig as JSON, e.g. a run state's `config`)."""
    include = config.get("review_include") or []
    exclude = config.get("review_exclude") or []
    return PathFilter.of([str(item) for item in include], [str(item) for item in exclude])


def reviewable_files(files: Sequence[str], config: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(kept, left out): `files` without those the config's review_include / review_exclude leave out, and
    without fixloop's own files (OWN_FILES: its config and the baseline, not code to review)."""
    kept, left_out = review_path_filter(config).split([item for item in files if item not in OWN_FILES])
    return kept, left_out


NOT_UTF8_REASON = "its name is not UTF-8, so it cannot be named to a reviewer; rename it to review it"


def shown_name(name: str) -> str:
    """A file name as text that any sink can hold: bytes that are not UTF-8 written as \\xNN."""
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no file system byte gave
        raw = name.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


def split_unreadable(files: Sequence[str]) -> tuple[list[str], list[dict[str, str]]]:
    """(readable, not reviewable): files whose name is not UTF-8 (git hands them over as undecodable
    bytes) are taken out, each named with why, instead of stopping the run when a task names it."""
    readable: list[str] = []
    unreadable: list[dict[str, str]] = []
    for name in files:
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            unreadable.append({"file": shown_name(name), "reason": NOT_UTF8_REASON})
            continue
        readable.append(name)
    return readable, unreadable


def not_reviewable_warning(unreadable: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    names = ", ".join(item["file"] for item in unreadable[:20])
    more = f" and {len(unreadable) - 20} more" if len(unreadable) > 20 else ""
    return {
        "code": "FILE_NAME_NOT_UTF8",
        "message": f"{len(unreadable)} changed file(s) not reviewed: {names}{more}: {NOT_UTF8_REASON}.",
        "files": [item["file"] for item in unreadable],
        "impact": "these files are left out of the review",
    }


def collect_files(
    root: Path, changed_files: Sequence[str] | None, git_base: str | None, tolerate_git: bool = True
) -> tuple[list[str], str | None, list[dict[str, Any]]]:
    """(files, base_ref, warnings). `git_base` "" or "HEAD" means the work tree against HEAD (or, before the
    first commit, everything staged or untracked). Outside a git repository that is NOT_A_GIT_REPOSITORY;
    with `tolerate_git`, git's other failures (GIT_UNAVAILABLE: not installed, timed out) become a warning
    and an empty list, otherwise they are raised."""
    if changed_files is not None and git_base is not None:
        raise FixloopError(
            "CONFLICTING_ARGUMENTS",
            "Give either changed files or --git-diff, not both.",
            arguments=["--changed-files", "--git-diff"],
        )
    if changed_files is not None:
        return normalize_files(root, changed_files), None, []
    if git_base is None:
        return [], None, []
    base = None if git_base in ("", "HEAD") else git_base
    try:
        return gitfiles.changed_files(root, base), base or "HEAD", []
    except FixloopError as error:
        if error.code == "GIT_UNAVAILABLE" and shutil.which("git") and not gitfiles.is_repository(root):
            raise FixloopError(  # the user's mistake, not git's: never a run with nothing to review
                "NOT_A_GIT_REPOSITORY",
                f"{root} is not a git repository, so --git-diff has no changes to take. Name the files "
                "instead: --changed-files FILE ...",
                project=str(root),
            ) from None
        if error.code != "GIT_UNAVAILABLE" or not tolerate_git:
            raise
        warning = {
            "code": "GIT_UNAVAILABLE",
            "message": error.message,
            "impact": "changed files unknown; the run starts with an empty list",
        }
        return [], base or "HEAD", [warning]


def set_files(
    root: Path,
    run_id: str,
    changed_files: Sequence[str] | None = None,
    git_base: str | None = None,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Replace the run's changed files (explicit list, or from git: `git_base` "" = HEAD).

    Unlike start_run, GIT_UNAVAILABLE is raised here (exit 1) and the files stay as they were."""
    clock = clock or timekeeping.default_clock
    if changed_files is None and git_base is None:
        raise FixloopError(
            "MISSING_ARGUMENT",
            "Give --changed-files F ... or --git-diff [BASE].",
            arguments=[
                "--changed-files",
                "--git-diff",
            ],
        )
    state = load_run(root, run_id)
    require_running(state)
    files, base_ref, _ = collect_files(root, changed_files, git_base, tolerate_git=False)
    files, unreadable = split_unreadable(files)
    config = state.get("config")
    files, left_out = reviewable_files(files, config if isinstance(config, dict) else {})
    files, skipped = split_unreviewable(root, files)
    store = store_for(root, run_id, clock)
    now = timekeeping.now_ms(clock)

    def replace(current: dict[str, Any]) -> None:
        require_running(current)
        current["changed_files"] = files
        current["base_ref"] = base_ref
        for key, value in (
            ("files_not_reviewable", unreadable),
            ("files_left_out", left_out),
            ("files_skipped", skipped),
        ):
            current.pop(key, None)
            if value:
                current[key] = value
        current["updated_at"] = utc_timestamp_ms(now / 1000)

    state = store.update(replace, action="set_files")
    summary: dict[str, Any] = {
        "count": len(files),
        "source": "git" if git_base is not None else "explicit",
        "base_ref": base_ref,
    }
    answer: dict[str, Any] = {"run_id": run_id, "changed_files": files, "base_ref": base_ref, "warnings": []}
    if left_out:  # only said when the path filters left something out
        summary["left_out"] = answer["files_left_out"] = left_out
    if skipped:
        summary["skipped"] = answer["files_skipped"] = skipped
    log = run_log(state, clock)
    log.emit("I", "DATA_COLLECTED", data_type="changed_files", summary=summary)
    if unreadable:
        answer["files_not_reviewable"] = unreadable
        answer["warnings"].append(not_reviewable_warning(unreadable))
        log.emit("W", "WARNING", **not_reviewable_warning(unreadable))
    return answer
