"""UserPromptSubmit: a `/fixloop:` prompt is kept for the engine (redacted, mode 0600); any other prompt
costs no interpreter start."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers_imports import NOT_IN_HOOKS, in_packages, modules_imported_by_process
from hook_helpers import PLUGIN_ROOT, HookEnv, write_executable

from fixloop.store import layout


def prompt_payload(hooks: HookEnv, prompt: str, session: str | None = None) -> dict[str, Any]:
    """UserPromptSubmit as Claude Code 2.1.328 sends it."""
    return {
        "session_id": session or hooks.session,
        "transcript_path": str(hooks.project / "transcript.jsonl"),
        "cwd": str(hooks.project),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        "prompt_id": "prompt-0001",
    }


def compact(payload: dict[str, Any]) -> bytes:
    """The payload as Claude Code writes it: compact JSON."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def kept_file(hooks: HookEnv) -> Path:
    return hooks.project / ".claude" / "fixloop" / "sessions" / f"{hooks.session}.prompt"


def spy_python(hooks: HookEnv, tmp_path: Path) -> Path:
    """An interpreter for run-hook that leaves a marker file when it starts."""
    marker = tmp_path / "python-started"
    spy = write_executable(
        tmp_path / "spy-python", f'#!/bin/sh\ntouch "{marker}"\nexec "{sys.executable}" "$@"\n'
    )
    (hooks.data / "python3-path").write_text(f"{spy}\n")
    return marker


@pytest.mark.parametrize("as_sent", [compact, lambda payload: json.dumps(payload).encode()])
def test_a_fixloop_prompt_is_kept_for_the_session(hooks: HookEnv, as_sent: Any) -> None:
    prompt = "/fixloop:fix-backend src/app.py --token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 é"
    done = hooks.run("UserPromptSubmit", as_sent(prompt_payload(hooks, prompt)))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    path = kept_file(hooks)
    assert str(path) == layout.prompt_path(hooks.project, hooks.session)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert sorted(doc) == ["prompt", "prompt_id", "ts_ms"]
    assert doc["prompt"] == "/fixloop:fix-backend src/app.py --token=[REDACTED] é"
    assert doc["prompt_id"] == "prompt-0001"
    assert isinstance(doc["ts_ms"], int) and doc["ts_ms"] > 1_600_000_000_000
    assert not (hooks.data / "hook-warnings.jsonl").exists()


def test_white_space_before_the_command_is_allowed(hooks: HookEnv, tmp_path: Path) -> None:
    marker = spy_python(hooks, tmp_path)
    prompt = " \n\t /fixloop:review"
    assert hooks.run("UserPromptSubmit", compact(prompt_payload(hooks, prompt))).returncode == 0
    assert marker.exists()
    assert json.loads(kept_file(hooks).read_text())["prompt"] == prompt


def test_a_later_prompt_replaces_the_earlier_one(hooks: HookEnv) -> None:
    for prompt in ("/fixloop:review a", "/fixloop:review b"):
        hooks.run("UserPromptSubmit", compact(prompt_payload(hooks, prompt)))
    assert json.loads(kept_file(hooks).read_text())["prompt"] == "/fixloop:review b"
    assert [p.name for p in kept_file(hooks).parent.iterdir()] == [kept_file(hooks).name]


@pytest.mark.parametrize(
    "prompt",
    [
        "please run /fixloop:review",
        "/fix the tests",
        "hello",
        "",
        "/fixloop-review",
        'say "prompt":"/fixloop:x"',
    ],
)
def test_any_other_prompt_keeps_nothing_and_starts_no_interpreter(
    hooks: HookEnv, tmp_path: Path, prompt: str
) -> None:
    marker = spy_python(hooks, tmp_path)
    done = hooks.run("UserPromptSubmit", compact(prompt_payload(hooks, prompt)))
    assert (done.returncode, done.stdout) == (0, "")
    assert not marker.exists()
    assert not (hooks.project / ".claude").exists()


def test_a_long_prompt_is_cut_and_marked(hooks: HookEnv) -> None:
    prompt = "/fixloop:execute-plan " + "é" * 200_000  # 400 KB of UTF-8
    assert hooks.run("UserPromptSubmit", compact(prompt_payload(hooks, prompt))).returncode == 0
    doc = json.loads(kept_file(hooks).read_text(encoding="utf-8"))
    assert doc["truncated"] is True
    kept = doc["prompt"].encode("utf-8")
    assert 256 * 1024 - 1 <= len(kept) <= 256 * 1024  # never half a character
    assert prompt.startswith(doc["prompt"])


@pytest.mark.parametrize("session", ["../escape", "a" * 129, "has space"])
def test_a_session_id_that_cannot_name_a_file_is_refused(hooks: HookEnv, session: str) -> None:
    payload = prompt_payload(hooks, "/fixloop:review", session=session)
    done = hooks.run("UserPromptSubmit", compact(payload), {"CLAUDE_CODE_SESSION_ID": ""})
    assert (done.returncode, done.stdout) == (0, "")
    sessions = hooks.project / ".claude" / "fixloop" / "sessions"
    assert not sessions.exists() or list(sessions.iterdir()) == []
    (line,) = (hooks.data / "hook-warnings.jsonl").read_text().splitlines()
    warning = json.loads(line)
    assert (warning["type"], warning["code"], warning["hook"]) == (
        "WARNING",
        "INVALID_SESSION_ID",
        "UserPromptSubmit",
    )


def test_a_broken_payload_fails_open_with_a_warning(hooks: HookEnv) -> None:
    done = hooks.run("UserPromptSubmit", b'{"prompt":"/fixloop:review", oops')
    assert (done.returncode, done.stdout) == (0, "")
    warning = json.loads((hooks.data / "hook-warnings.jsonl").read_text())
    assert warning["code"] == "HOOK_FAILED"


def test_keeping_a_prompt_loads_no_upper_layer_nor_heavy_module(hooks: HookEnv) -> None:
    loaded = modules_imported_by_process(
        [sys.executable, "-E", "-S", "-X", "importtime", str(PLUGIN_ROOT / "hooks" / "user_prompt.py")],
        compact(prompt_payload(hooks, "/fixloop:fix-backend src/app.py")),
        hooks.env,
        hooks.project,
    )
    assert "fixloop.hookside.prompt" in loaded
    assert kept_file(hooks).exists()
    assert in_packages(loaded, NOT_IN_HOOKS) == []


def test_the_kept_prompt_stays_out_of_git(hooks: HookEnv) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--allow-empty", "-m", "project"]):
        subprocess.run([*git, *command], cwd=hooks.project, check=True)
    done = hooks.run("UserPromptSubmit", prompt_payload(hooks, "/fixloop:review"))
    assert done.returncode == 0
    assert kept_file(hooks).is_file()
    status = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=all"],
        cwd=hooks.project,
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""


def test_a_fixloop_folder_that_leads_outside_the_project_is_not_written(
    hooks: HookEnv, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (hooks.project / ".claude").mkdir(exist_ok=True)
    (hooks.project / ".claude" / "fixloop").symlink_to(elsewhere, target_is_directory=True)
    done = hooks.run("UserPromptSubmit", prompt_payload(hooks, "/fixloop:review"))
    assert (done.returncode, done.stdout) == (0, "")
    assert list(elsewhere.rglob("*")) == []
    (warning,) = [json.loads(line) for line in (hooks.data / "hook-warnings.jsonl").read_text().splitlines()]
    assert warning["code"] == "FIXLOOP_DIR_OUTSIDE_PROJECT"
