"""Touch windows and what the Edit/Write hooks record: resolved paths, the prior content kept once, the
ledger lines."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fixloop.core.errors import FixloopError
from fixloop.store import ledger, touches


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    os.chmod(root / "src" / "app.py", 0o755)
    return root.resolve()


@pytest.fixture
def run_dir(project: Path) -> Path:
    return project / ".claude" / "fixloop" / "runs" / "r1"


def note(run_dir: Path, kind: str, path: str, project: Path, **fields: Any) -> dict[str, Any]:
    call: dict[str, Any] = {
        "cwd": str(project),
        "agent_type": "fixloop:review-fixer",
        "agent": "review-fixer",
        "agent_id": "agent-1",
        "tool": "Edit",
        "tool_use_id": "toolu_1",
        "ts_ms": 1000,
        **fields,
    }
    return touches.note(run_dir, kind, touches.active_window(run_dir), str(project), path, **call)


def test_paths_resolve_inside_the_project(project: Path, tmp_path: Path) -> None:
    (project / "lib").symlink_to("src")
    (tmp_path / "elsewhere").mkdir()
    (project / "ext").symlink_to(tmp_path / "elsewhere")
    root = str(project)
    assert touches.resolve(root, str(project / "src" / "app.py")) == ("src/app.py", None)
    assert touches.resolve(root, "app.py", cwd=str(project / "src")) == ("src/app.py", None)
    assert touches.resolve(root, str(project / "lib" / "app.py")) == ("src/app.py", None)
    assert touches.resolve(root, str(project / "new" / "file.py")) == ("new/file.py", None)
    outside = str((tmp_path / "elsewhere" / "x.py").resolve())
    assert touches.resolve(root, str(project / "ext" / "x.py")) == (outside, touches.OUTSIDE_PROJECT)
    assert touches.resolve(root, "../x.py") == (str(tmp_path.resolve() / "x.py"), touches.OUTSIDE_PROJECT)
    assert touches.resolve(root, root) == (root, touches.OUTSIDE_PROJECT)
    state = str(project / ".claude" / "fixloop" / "runs" / "r1" / "state.json")
    assert touches.resolve(root, state) == (".claude/fixloop/runs/r1/state.json", touches.FIXLOOP_FILE)


def test_a_window_is_active_until_closed(project: Path, run_dir: Path) -> None:
    assert touches.active_window(run_dir) is None
    window = touches.open_window(run_dir, project, "round-1", baseline={"dir": "x"}, now_ms=5)
    assert window == {
        "label": "round-1",
        "project": str(project),
        "dir": str(run_dir / "touches" / "round-1"),
        "opened_at_ms": 5,
        "baseline": {"dir": "x"},
    }
    assert touches.active_window(run_dir) == window
    assert touches.read_window(run_dir, "round-1") == window
    touches.close_window(run_dir, "round-2")  # not the active one: nothing changes
    assert touches.active_window(run_dir) == window
    touches.close_window(run_dir, "round-1")
    assert touches.active_window(run_dir) is None
    assert touches.read_window(run_dir, "round-1") == window  # its record stays for a rollback
    with pytest.raises(FixloopError) as missing:
        touches.read_window(run_dir, "round-9")
    assert missing.value.code == "TOUCHES_MISSING"


@pytest.mark.parametrize("label", ["", "../x", "a/b", "-x", "x" * 65, "round 1"])
def test_labels_name_a_folder_and_nothing_else(project: Path, run_dir: Path, label: str) -> None:
    with pytest.raises(FixloopError) as refused:
        touches.open_window(run_dir, project, label)
    assert refused.value.code == "INVALID_LABEL"


def test_the_first_touch_keeps_the_prior_content_once(project: Path, run_dir: Path) -> None:
    touches.open_window(run_dir, project, "round-1")
    app = str(project / "src" / "app.py")
    first = note(run_dir, "touch", app, project)
    (project / "src" / "app.py").write_text("edited\n")
    wrote = note(run_dir, "wrote", app, project)
    again = note(run_dir, "touch", app, project, tool_use_id="toolu_2", agent_id="agent-2")
    before = ledger.message_sha256(b"print('hi')\n")
    common = {
        "ts_ms": 1000,
        "agent_type": "fixloop:review-fixer",
        "agent": "review-fixer",
        "tool": "Edit",
        "window": "round-1",
        "path": "src/app.py",
        "refused": None,
    }
    assert first == {
        "kind": "touch",
        **common,
        "agent_id": "agent-1",
        "tool_use_id": "toolu_1",
        "before_kind": "file",
        "before_sha256": before,
        "first": True,
    }
    assert wrote == {
        "kind": "wrote",
        **common,
        "agent_id": "agent-1",
        "tool_use_id": "toolu_1",
        "after_kind": "file",
        "after_sha256": ledger.message_sha256(b"edited\n"),
    }
    assert again["first"] is False and again["before_sha256"] == wrote["after_sha256"]
    assert ledger.read(run_dir) == [first, wrote, again]
    assert touches.window_lines(run_dir, "round-1") == [first, wrote, again]
    window = touches.read_window(run_dir, "round-1")
    (prior,) = touches.read_priors(window).values()
    assert {key: prior[key] for key in ("path", "kind", "sha256", "mode", "new_dirs", "agent_id")} == {
        "path": "src/app.py",
        "kind": "file",
        "sha256": before,
        "mode": 0o755,
        "new_dirs": None,
        "agent_id": "agent-1",
    }
    assert Path(touches.prior_path(window, prior)).read_bytes() == b"print('hi')\n"


def test_a_new_file_is_kept_as_absent_with_the_folders_it_needs(project: Path, run_dir: Path) -> None:
    touches.open_window(run_dir, project, "round-1")
    line = note(run_dir, "touch", str(project / "pkg" / "sub" / "new.py"), project)
    assert (line["before_kind"], line["before_sha256"], line["first"]) == ("absent", None, True)
    (prior,) = touches.read_priors(touches.read_window(run_dir, "round-1")).values()
    assert (prior["kind"], prior["data"], prior["new_dirs"]) == ("absent", None, "pkg")


def test_refused_paths_and_touches_without_a_window_keep_nothing(
    project: Path, run_dir: Path, tmp_path: Path
) -> None:
    line = note(run_dir, "touch", str(project / "src" / "app.py"), project)
    assert (line["window"], line["first"], line["refused"]) == (None, False, None)
    touches.open_window(run_dir, project, "round-1")
    outside = note(run_dir, "touch", str(tmp_path / "x.py"), project)
    assert (outside["path"], outside["refused"]) == (str(tmp_path.resolve() / "x.py"), "outside_project")
    assert "first" not in outside and "before_sha256" not in outside
    own = note(run_dir, "touch", str(run_dir / "state.json"), project)
    assert own["refused"] == "fixloop_file"
    assert touches.read_priors(touches.read_window(run_dir, "round-1")) == {}


def test_a_first_touch_that_loses_the_race_leaves_no_content_behind(
    project: Path, run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = touches.open_window(run_dir, project, "round-1")
    app = str(project / "src" / "app.py")
    kept, state = touches.keep_prior(window, "src/app.py", app, agent_id="a", tool_use_id="t1", ts_ms=1)
    assert kept is True and state[0] == "file"
    # Another hook checked before this one created the record: its exclusive create fails.
    monkeypatch.setattr(touches.os.path, "exists", lambda path: False)
    assert touches.keep_prior(window, "src/app.py", app, agent_id="b", tool_use_id="t2", ts_ms=2)[0] is False
    priors = Path(window["dir"]) / "priors"
    assert len(list(priors.glob("*.data"))) == 1
    (record,) = priors.glob("*.json")
    assert json.loads(record.read_text())["agent_id"] == "a"


def test_reopening_a_window_starts_it_afresh(project: Path, run_dir: Path) -> None:
    touches.open_window(run_dir, project, "round-1")
    note(run_dir, "touch", str(project / "src" / "app.py"), project)
    window = touches.open_window(run_dir, project, "round-1")
    assert touches.read_priors(window) == {}
