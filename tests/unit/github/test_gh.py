"""fixloop.github.gh and graphql: how gh is run, and what its failures become."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fake_github import GITHUB_HOST, FakeGitHub

from fixloop.core.errors import FixloopError
from fixloop.github.gh import Gh
from fixloop.github.graphql import graphql


def fake_gh(directory: Path, script: str) -> Path:
    directory.mkdir()
    path = directory / "gh"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return directory


def test_gh_runs_with_the_users_environment_and_no_prompts(tmp_path: Path) -> None:
    bin_dir = fake_gh(tmp_path / "bin", 'echo "$GH_PROMPT_DISABLED $GH_TOKEN $1 $2"\ncat\n')
    gh = Gh(
        tmp_path,
        {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "GH_TOKEN": "t0k", "GH_PROMPT_DISABLED": "0"},
    )
    done = gh.run("api", "graphql", input_text="{}")
    assert (done.returncode, done.stdout, done.args) == (0, "1 t0k api graphql\n{}", ("api", "graphql"))


def test_gh_missing_or_too_slow(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as missing:
        Gh(tmp_path, {"PATH": str(tmp_path)}).run("auth", "status")
    assert missing.value.code == "GH_UNAVAILABLE"
    bin_dir = fake_gh(tmp_path / "bin", "exec sleep 30\n")
    with pytest.raises(FixloopError) as slow:
        Gh(tmp_path, {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}, timeout=0.5).run("pr", "view")
    assert (slow.value.code, slow.value.message) == ("GH_TIMEOUT", "`gh pr view` did not finish within 0.5s.")


def test_graphql_errors(github: FakeGitHub, gh_env: dict[str, str], tmp_path: Path) -> None:
    gh = Gh(tmp_path)
    assert graphql(gh, GITHUB_HOST, "query Q { viewer { login } }", {}) == {
        "viewer": {"login": "fixloop-bot"}
    }
    with pytest.raises(FixloopError) as unknown:
        graphql(gh, GITHUB_HOST, "query Q { viewer { nickname } }", {})
    assert (unknown.value.code, unknown.value.message) == (
        "GITHUB_API_ERROR",
        "GitHub: Field 'nickname' doesn't exist on type 'User'",
    )
    gh.env["GH_ENTERPRISE_TOKEN"] = "ghp_revoked"
    with pytest.raises(FixloopError) as refused:
        graphql(gh, GITHUB_HOST, "query Q { viewer { login } }", {})
    assert refused.value.code == "GH_AUTH_REQUIRED" and "`gh auth login`" in refused.value.message
    assert [(r.host, r.path, r.status) for r in github.requests] == [
        (GITHUB_HOST, "/api/graphql", 200)
    ] * 2 + [(GITHUB_HOST, "/api/graphql", 401)]
