"""Hooks run on a project whose fixloop folders a symbolic link sends outside it: each fails open (exit 0,
nothing printed), writes nothing where the link leads, and leaves a WARNING in the plugin's data directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_runs import sha256_tree
from hook_helpers import HookEnv, Run
from test_file_touch import edit_payload


def move_out(folder: Path, elsewhere: Path) -> None:
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere, target_is_directory=True)


@pytest.mark.parametrize("linked", ["runs", "run", "touches"])
def test_a_fixers_edit_through_a_linked_folder_writes_nothing_there(
    hooks: HookEnv, run: Run, tmp_path: Path, linked: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    if linked == "runs":
        move_out(run.dir.parent, elsewhere)
    elif linked == "run":
        move_out(run.dir, elsewhere)
    else:
        elsewhere.mkdir()
        (run.dir / "touches").symlink_to(elsewhere, target_is_directory=True)
    before = sha256_tree(elsewhere)
    for event in ("PreToolUse", "PostToolUse"):
        done = hooks.run(event, edit_payload(hooks, event, hooks.project / "src" / "app.py"), tool="Edit")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert sha256_tree(elsewhere) == before
    warnings = [json.loads(line) for line in (hooks.data / "hook-warnings.jsonl").read_text().splitlines()]
    assert {warning["code"] for warning in warnings} == {"FIXLOOP_DIR_OUTSIDE_PROJECT"}
