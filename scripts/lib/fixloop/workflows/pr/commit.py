"""The engine's commit of a fix: exactly the files the fixer changed, with a message naming the threads.

`git add -A -- FILES` then `git commit -- FILES` (only those paths, whatever else is staged), pathspecs
taken literally. The user's git identity and commit hooks apply; a hook may take its time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.redact import redact

COMMIT_TIMEOUT_SECONDS = 600
_GIT_ENV_OVERRIDES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")
MAX_SUBJECT_THREADS = 3


def _git(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    executable = shutil.which("git")
    if executable is None:
        raise FixloopError("COMMIT_FAILED", "git is not installed (not found on PATH).")
    env = {key: value for key, value in os.environ.items() if key not in _GIT_ENV_OVERRIDES}
    try:
        return subprocess.run(
            [executable, "-c", "core.quotepath=off", "--literal-pathspecs", *args],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=COMMIT_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise FixloopError(
            "COMMIT_FAILED", f"git {args[0]} did not finish within {COMMIT_TIMEOUT_SECONDS}s."
        ) from None
    except OSError as error:
        raise FixloopError("COMMIT_FAILED", f"Cannot run git: {error.strerror or error}.") from None


def _head(project: Path) -> str | None:
    done = _git(project, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    return done.stdout.strip() or None if done.returncode == 0 else None


def commit_message(pr_number: int | None, threads: Sequence[dict[str, Any]], run_id: str) -> str:
    """Subject naming the pull request and threads; a body with one line per thread."""
    where = [f"{t.get('path')}:{t.get('line') or t.get('original_line') or '?'}" for t in threads]
    subject = f"Address review comments on #{pr_number}: " if pr_number else "Address review comments: "
    subject += ", ".join(where[:MAX_SUBJECT_THREADS]) + (
        f" and {len(where) - MAX_SUBJECT_THREADS} more" if len(where) > MAX_SUBJECT_THREADS else ""
    )
    lines = [subject, "", "Review threads:"]
    lines += [f"- {thread.get('id')} ({place})" for thread, place in zip(threads, where, strict=True)]
    lines += ["", f"fixloop run {run_id}"]
    return "\n".join(lines)


def commit_files(project: Path, files: Sequence[str], message: str) -> dict[str, Any]:
    """Commit exactly `files` (project-relative) with `message`: {"sha", "parent", "files"}.
    COMMIT_FAILED with git's words when git refuses (no identity, a hook, nothing to commit)."""
    paths = sorted(set(files))
    if not paths:
        raise FixloopError("COMMIT_FAILED", "No files to commit.")
    parent = _head(project)
    for args in (("add", "-A", "--", *paths), ("commit", "--quiet", "-m", message, "--", *paths)):
        done = _git(project, *args)
        if done.returncode != 0:
            said = redact((done.stderr.strip() or done.stdout.strip())[-2000:])
            raise FixloopError(
                "COMMIT_FAILED",
                f"git {args[0]} failed: {said or 'exit ' + str(done.returncode)}",
                files=paths,
            )
    sha = _head(project)
    if sha is None or sha == parent:
        raise FixloopError("COMMIT_FAILED", "git commit made no commit.", files=paths)
    return {"sha": sha, "parent": parent, "files": paths}
