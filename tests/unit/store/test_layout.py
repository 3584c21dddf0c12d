from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id, is_run_id, new_run_id
from fixloop.store import layout

# ---- ids -----------------------------------------------------------------------------------------


def test_new_run_id_is_eight_lowercase_hex_and_varies() -> None:
    ids = {new_run_id() for _ in range(200)}
    assert all(re.fullmatch(r"[0-9a-f]{8}", value) for value in ids)
    assert len(ids) > 190


def test_check_run_id_accepts_and_returns_a_valid_id() -> None:
    assert check_run_id("a1b2c3d4") == "a1b2c3d4"
    assert is_run_id("0123abcd")


@pytest.mark.parametrize(
    "value", ["", "A1B2C3D4", "a1b2c3d", "a1b2c3d4e", "a1b2c3d4\n", "g1b2c3d4", "../a1b2c", " a1b2c3d4"]
)
def test_check_run_id_rejects_malformed_strings(value: str) -> None:
    with pytest.raises(FixloopError) as caught:
        check_run_id(value)
    assert caught.value.code == "INVALID_RUN_ID"
    assert caught.value.details == {"received": value}
    assert not is_run_id(value)


@pytest.mark.parametrize("value", [None, 12345678, ["a1b2c3d4"]])
def test_check_run_id_rejects_non_strings(value: object) -> None:
    with pytest.raises(FixloopError) as caught:
        check_run_id(value)
    assert caught.value.code == "INVALID_RUN_ID"
    assert caught.value.details == {"received": repr(value)}


# ---- project layout --------------------------------------------------------------------------------


def test_project_root_prefers_claude_project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    assert Path(layout.project_root(tmp_path / "elsewhere")) == tmp_path.resolve()


def test_project_root_finds_git_directory_above_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    (tmp_path / ".git").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert Path(layout.project_root(deep)) == tmp_path.resolve()
    monkeypatch.chdir(deep)
    assert Path(layout.project_root()) == tmp_path.resolve()


def test_project_root_accepts_a_git_file_of_a_worktree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    (tmp_path / ".git").write_text("gitdir: /somewhere/else\n")
    (tmp_path / "src").mkdir()
    assert Path(layout.project_root(tmp_path / "src")) == tmp_path.resolve()


def test_project_root_without_git_is_the_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    if any((parent / ".git").exists() for parent in (tmp_path, *tmp_path.parents)):
        pytest.skip("the temporary directory lies inside a git checkout")
    (tmp_path / "x").mkdir()
    assert Path(layout.project_root(tmp_path / "x")) == (tmp_path / "x").resolve()
    monkeypatch.chdir(tmp_path)
    assert Path(layout.project_root()) == tmp_path.resolve()


def test_layout_paths(tmp_path: Path) -> None:
    assert Path(layout.runs_dir(tmp_path)) == tmp_path / ".claude" / "fixloop" / "runs"
    assert (
        Path(layout.run_dir(tmp_path, "a1b2c3d4")) == tmp_path / ".claude" / "fixloop" / "runs" / "a1b2c3d4"
    )
    assert (
        Path(layout.state_path(tmp_path, "a1b2c3d4")) == tmp_path / ".claude/fixloop/runs/a1b2c3d4/state.json"
    )
    assert Path(layout.logs_dir(tmp_path, "bugfix")) == tmp_path / ".claude" / "logs" / "fixloop" / "bugfix"
    assert Path(layout.logs_dir(tmp_path, "pr-review")) == tmp_path / ".claude/logs/fixloop/pr-review"
    assert Path(layout.session_index_dir(tmp_path)) == tmp_path / ".claude" / "fixloop" / "sessions"


# The hooks check ids with string operations: they must accept exactly what these patterns accept.
@given(st.text(alphabet=st.sampled_from(list("0123456789abcdefABCDEF_-g é\n/.")), max_size=10))
def test_run_id_check_is_the_pattern(value: str) -> None:
    assert is_run_id(value) == (re.fullmatch(r"[0-9a-f]{8}", value) is not None)


@given(
    st.text(alphabet=st.sampled_from(list("aZ09_-")), min_size=120, max_size=135)
    | st.text(alphabet=st.characters(), max_size=6)
)
def test_session_id_check_is_the_pattern(value: str) -> None:
    assert layout.is_session_id(value) == (re.fullmatch(r"[A-Za-z0-9_-]{1,128}", value) is not None)


def test_run_dir_rejects_a_bad_run_id(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        Path(layout.run_dir(tmp_path, "../../etc"))
    assert caught.value.code == "INVALID_RUN_ID"


@pytest.mark.parametrize("workflow", ["", "../x", "a/b", "-x", "x y", "a" * 65])
def test_logs_dir_rejects_unsafe_workflow_names(tmp_path: Path, workflow: str) -> None:
    with pytest.raises(FixloopError) as caught:
        Path(layout.logs_dir(tmp_path, workflow))
    assert caught.value.code == "INVALID_WORKFLOW"


# ---- session index -----------------------------------------------------------------------------------


def test_bind_session_writes_the_run_id_and_lookup_finds_it(tmp_path: Path) -> None:
    target = Path(layout.bind_session(tmp_path, "sess-01_AB", "a1b2c3d4"))
    assert target == tmp_path / ".claude" / "fixloop" / "sessions" / "sess-01_AB"
    assert target.read_bytes() == b"a1b2c3d4\n"
    assert layout.run_for_session(tmp_path, "sess-01_AB") == "a1b2c3d4"
    Path(layout.bind_session(tmp_path, "sess-01_AB", "00000000"))
    assert layout.run_for_session(tmp_path, "sess-01_AB") == "00000000"
    assert sorted(os.listdir(target.parent)) == ["sess-01_AB"]  # no temporary file left behind


def test_run_for_session_unknown_or_garbage_is_none(tmp_path: Path) -> None:
    assert layout.run_for_session(tmp_path, "nobody") is None
    index = Path(layout.session_index_dir(tmp_path))
    index.mkdir(parents=True)
    (index / "garbage").write_text("not-a-run-id\n")
    assert layout.run_for_session(tmp_path, "garbage") is None
    (index / "binary").write_bytes(b"\xff\xfe")
    assert layout.run_for_session(tmp_path, "binary") is None


@pytest.mark.parametrize("session_id", ["", "../escape", "a/b", "a b", "a" * 129, "é", ".hidden"])
def test_unsafe_session_ids_are_refused(tmp_path: Path, session_id: str) -> None:
    with pytest.raises(FixloopError) as caught:
        Path(layout.bind_session(tmp_path, session_id, "a1b2c3d4"))
    assert caught.value.code == "INVALID_SESSION_ID"
    assert layout.run_for_session(tmp_path, session_id) is None
    assert not Path(layout.session_index_dir(tmp_path)).exists()


def test_bind_session_rejects_a_bad_run_id(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        Path(layout.bind_session(tmp_path, "session", "nope"))
    assert caught.value.code == "INVALID_RUN_ID"


def test_session_id_of_128_characters_is_accepted(tmp_path: Path) -> None:
    Path(layout.bind_session(tmp_path, "a" * 128, "a1b2c3d4"))
    assert layout.run_for_session(tmp_path, "a" * 128) == "a1b2c3d4"


# ---- resolve_inside ------------------------------------------------------------------------------------


def test_resolve_inside_accepts_paths_within_the_root(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    assert layout.resolve_inside(root, "src/app.py") == root / "src" / "app.py"
    assert layout.resolve_inside(root, "src/../docs/x.md") == root / "docs" / "x.md"
    assert layout.resolve_inside(root, str(root / "a.txt")) == root / "a.txt"
    assert layout.resolve_inside(root, ".") == root
    assert layout.resolve_inside(root, Path("with space (1).txt")) == root / "with space (1).txt"


@pytest.mark.parametrize("user_path", ["../outside", "a/../../outside", "/etc/passwd", "src/../../.."])
def test_resolve_inside_refuses_paths_outside_the_root(tmp_path: Path, user_path: str) -> None:
    (tmp_path / "project").mkdir()
    with pytest.raises(FixloopError) as caught:
        layout.resolve_inside(tmp_path / "project", user_path)
    assert caught.value.code == "PATH_OUTSIDE_PROJECT"
    assert caught.value.details["received"] == user_path
    assert caught.value.details["reason"].startswith("outside the project")


def test_resolve_inside_refuses_a_sibling_with_the_root_as_prefix(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "project2").mkdir()
    with pytest.raises(FixloopError):
        layout.resolve_inside(tmp_path / "proj", str(tmp_path / "project2" / "x"))


def test_resolve_inside_refuses_a_symlink_leading_outside(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "link").symlink_to(tmp_path)
    with pytest.raises(FixloopError) as caught:
        layout.resolve_inside(root, "link/secret.txt")
    assert caught.value.code == "PATH_OUTSIDE_PROJECT"


@pytest.mark.parametrize(
    "user_path", ["a;rm -rf x", "a|b", "a&b", "$HOME/x", "`id`", "a\x00b", "a\nb", "a>b"]
)
def test_resolve_inside_refuses_shell_metacharacters(tmp_path: Path, user_path: str) -> None:
    with pytest.raises(FixloopError) as caught:
        layout.resolve_inside(tmp_path, user_path)
    assert caught.value.code == "PATH_OUTSIDE_PROJECT"
    assert caught.value.details["reason"].startswith("shell metacharacters")


def test_resolve_inside_refuses_an_empty_path(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        layout.resolve_inside(tmp_path, "  ")
    assert caught.value.details["reason"] == "empty path"
