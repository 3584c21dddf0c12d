"""The files a run works on, from git: changed against a base, staged, and untracked-but-not-ignored.

Paths are relative to the project directory (the repository root in the usual case where they are the
same; when the project is a subfolder of a repository, files outside it are left out). Deleted files and
fixloop's own files (`.claude/fixloop/`, `.claude/logs/fixloop/`) are left out; the list is sorted and has
no duplicates. Standard library only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from fixloop.core.errors import FixloopError

GIT_TIMEOUT_SECONDS = 30
# fixloop's own files (run state, snapshots, logs) are never "changed files" of the project.
OWN_PREFIXES: tuple[str, ...] = (".claude/fixloop/", ".claude/logs/fixloop/")
# Variables that would point git at another repository than the project's.
_GIT_ENV_OVERRIDES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")


def _unavailable(message: str, **details: object) -> FixloopError:
    return FixloopError("GIT_UNAVAILABLE", message, exit_code=1, **details)


def run_git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    executable = shutil.which("git")
    if executable is None:
        raise _unavailable("git is not installed (not found on PATH).")
    env = {key: value for key, value in os.environ.items() if key not in _GIT_ENV_OVERRIDES}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["LC_ALL"] = "C"
    try:
        result = subprocess.run(
            [executable, "-c", "core.quotepath=off", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise _unavailable(f"git {args[0]} did not finish within {GIT_TIMEOUT_SECONDS}s.") from None
    except OSError as error:
        raise _unavailable(f"Cannot run git: {error.strerror or error}.") from None
    if check and result.returncode != 0:
        stderr = result.stderr.decode("utf-8", "replace").strip()
        raise _unavailable(
            f"git {args[0]} failed: {stderr or 'exit ' + str(result.returncode)}", project=str(cwd)
        )
    return result


def repo_root(project: Path) -> Path:
    """The top of the work tree that holds `project`; GIT_UNAVAILABLE when git is missing or there is none."""
    if not project.is_dir():
        raise _unavailable(f"Project directory {project} does not exist.", project=str(project))
    result = run_git(project, "rev-parse", "--show-toplevel", check=False)
    if result.returncode != 0:
        stderr = result.stderr.decode("utf-8", "replace").strip()
        raise _unavailable(f"Not a git repository: {stderr or project}", project=str(project))
    return Path(result.stdout.decode("utf-8", "surrogateescape").strip())


def _names(output: bytes) -> list[str]:
    return [name for name in output.decode("utf-8", "surrogateescape").split("\0") if name]


def is_repository(project: Path) -> bool:
    try:
        repo_root(project)
    except FixloopError:
        return False
    return True


def has_head(root: Path) -> bool:
    return run_git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).returncode == 0


def check_base(root: Path, base: str) -> str:
    """Resolve `base` to a commit id; INVALID_GIT_BASE when it names no commit."""
    if not base or base.startswith("-") or any(ch in base for ch in "\0\n\r"):
        raise FixloopError("INVALID_GIT_BASE", f"Invalid git base {base!r}.", received=base)
    result = run_git(
        root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{base}^{{commit}}", check=False
    )
    if result.returncode != 0:
        raise FixloopError(
            "INVALID_GIT_BASE",
            f"Git base {base!r} does not name a commit in {root}.",
            received=base,
            suggestion="Use a branch, tag or commit id, e.g. HEAD, main or origin/main.",
        )
    return result.stdout.decode("ascii").strip()


def changed_files(project: Path, base: str | None = None) -> list[str]:
    """Files changed in the work tree against `base` (default HEAD), staged files, and untracked files.

    Raises GIT_UNAVAILABLE (exit 1) when git is missing or `project` is not in a work tree, INVALID_GIT_BASE
    (exit 2) for a base that names no commit.
    """
    project = project.resolve()
    root = repo_root(project).resolve()
    names: set[str] = set()
    if base is not None:
        commit: str | None = check_base(root, base)
    else:
        commit = "HEAD" if has_head(root) else None
    if commit is not None:
        # The work tree against the base: covers unstaged and staged changes since it.
        names.update(
            _names(run_git(root, "diff", "--name-only", "-z", "--diff-filter=d", commit, "--").stdout)
        )
        names.update(
            _names(
                run_git(root, "diff", "--cached", "--name-only", "-z", "--diff-filter=d", commit, "--").stdout
            )
        )
    else:
        # No commit yet: everything in the index is new.
        names.update(_names(run_git(root, "ls-files", "-z", "--cached").stdout))
    names.update(_names(run_git(root, "diff", "--name-only", "-z", "--diff-filter=d", "--").stdout))
    names.update(_names(run_git(root, "ls-files", "-z", "--others", "--exclude-standard").stdout))
    result: set[str] = set()
    for name in names:
        absolute = root / name
        if not os.path.lexists(absolute):  # deleted in the work tree (e.g. staged, then removed)
            continue
        try:
            relative = absolute.relative_to(project)
        except ValueError:  # outside the project folder
            continue
        text = relative.as_posix()
        if not text.startswith(OWN_PREFIXES):
            result.add(text)
    return sorted(result)


def current_branch(project: Path) -> str | None:
    """The checked-out branch name, "HEAD" when detached, None when git or the repository is unavailable."""
    try:
        root = repo_root(project)
        result = run_git(root, "rev-parse", "--abbrev-ref", "HEAD", check=False)
        if result.returncode != 0:
            result = run_git(root, "symbolic-ref", "--short", "HEAD", check=False)
    except FixloopError:
        return None
    if result.returncode != 0:
        return None
    return result.stdout.decode("utf-8", "replace").strip() or None
