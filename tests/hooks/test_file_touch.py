"""The Edit/Write hooks (hooks/file_touch.py through hooks/run-hook): what a fixloop agent's edits leave in
its run, with the payloads Claude Code 2.1.328 sends; nothing, and no interpreter, for anyone else's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers_imports import NOT_IN_HOOKS, in_packages, modules_imported_by_process
from hook_helpers import PLUGIN_ROOT, HookEnv, Run, hook_command, sha256_file, write_executable

from fixloop.store import edits, file_state, touches

FIXER = "fixloop:review-fixer"
EDIT_TOOLS = "Edit|Write|MultiEdit|NotebookEdit"


def edit_payload(
    hooks: HookEnv,
    event: str,
    file_path: Path | str,
    *,
    tool: str = "Edit",
    agent_type: str | None = FIXER,
    tool_use_id: str = "toolu_e1",
    content: str = "new\n",
) -> dict[str, Any]:
    """A PreToolUse or PostToolUse payload of an Edit or Write call, as Claude Code 2.1.328 sends it."""
    payload: dict[str, Any] = {
        "session_id": hooks.session,
        "transcript_path": str(hooks.project / "transcript.jsonl"),
        "cwd": str(hooks.project),
        "prompt_id": "c5db0224-0bc5-4d34-be21-1e864f3ed01f",
        "permission_mode": "acceptEdits",
    }
    if agent_type is not None:
        payload.update(agent_id="a7afe3cceba27ef9d", agent_type=agent_type, effort={"level": "medium"})
    if tool == "Write":
        tool_input: dict[str, Any] = {"file_path": str(file_path), "content": content}
    else:
        tool_input = {"file_path": str(file_path), "old_string": "x", "new_string": "y", "replace_all": False}
    payload.update(hook_event_name=event, tool_name=tool, tool_input=tool_input, tool_use_id=tool_use_id)
    if event == "PostToolUse":
        payload["tool_response"] = {"filePath": str(file_path), "structuredPatch": [], "userModified": False}
        payload["duration_ms"] = 11
    return payload


def run_hook(hooks: HookEnv, payload: dict[str, Any] | bytes, **extra_env: str) -> None:
    """Run the hook hooks.json registers for the payload's edit tool; it must exit 0 and print nothing."""
    event = "PreToolUse" if isinstance(payload, bytes) else payload["hook_event_name"]
    done = hooks.run(event, payload, extra_env or None, tool="Edit")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def compact(payload: dict[str, Any]) -> bytes:
    """The payload as Claude Code writes it: compact JSON."""
    return json.dumps(payload, separators=(",", ":")).encode()


def spy_python(hooks: HookEnv, tmp_path: Path) -> Path:
    """An interpreter for run-hook that leaves a marker file when it starts."""
    marker = tmp_path / "python-started"
    spy = write_executable(
        tmp_path / "spy-python", f'#!/bin/sh\ntouch "{marker}"\nexec "{sys.executable}" "$@"\n'
    )
    (hooks.data / "python3-path").write_text(f"{spy}\n")
    return marker


@pytest.fixture
def fix_window(hooks: HookEnv, run: Run) -> dict[str, Any]:
    """A fix round begun on the run: snapshot and touch window `round-1`."""
    return edits.begin(hooks.project, run.dir, "round-1", ["src/app.py"])


def test_hooks_json_wires_the_edit_tools_to_file_touch() -> None:
    config = json.loads((PLUGIN_ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    for event in ("PreToolUse", "PostToolUse"):
        (entry,) = [e for e in config[event] if e["matcher"] == EDIT_TOOLS]
        assert entry["hooks"] == [
            {
                "type": "command",
                "command": 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/run-hook" file_touch',
                "timeout": 10,
            }
        ]
    assert all(e["matcher"] != EDIT_TOOLS for e in config["PostToolUseFailure"])


def test_an_edit_by_the_fixer_is_recorded_and_its_prior_content_kept(
    hooks: HookEnv, run: Run, fix_window: dict[str, Any]
) -> None:
    app = hooks.project / "src" / "app.py"
    before = sha256_file(app)
    run_hook(hooks, compact(edit_payload(hooks, "PreToolUse", app)))
    app.write_text("BROKEN\n")
    run_hook(hooks, compact(edit_payload(hooks, "PostToolUse", app)))
    touch, wrote = run.ledger()
    assert {
        key: touch[key] for key in ("kind", "agent_type", "agent", "agent_id", "tool", "tool_use_id")
    } == {
        "kind": "touch",
        "agent_type": FIXER,
        "agent": "review-fixer",
        "agent_id": "a7afe3cceba27ef9d",
        "tool": "Edit",
        "tool_use_id": "toolu_e1",
    }
    assert (touch["window"], touch["path"], touch["refused"], touch["first"]) == (
        "round-1",
        "src/app.py",
        None,
        True,
    )
    assert (touch["before_kind"], touch["before_sha256"]) == ("file", before)
    assert (wrote["kind"], wrote["agent_id"], wrote["after_sha256"]) == (
        "wrote",
        "a7afe3cceba27ef9d",
        sha256_file(app),
    )
    window = touches.read_window(run.dir, "round-1")
    (prior,) = touches.read_priors(window).values()
    assert Path(touches.prior_path(window, prior)).read_bytes() == b"def f(x):\n    return x + 1\n"
    assert run.events("WARNING") == []
    report = edits.rollback(fix_window)
    assert report["restored"] == ["src/app.py"]
    assert app.read_text() == "def f(x):\n    return x + 1\n"


def test_a_write_through_a_linked_folder_is_recorded_at_its_real_path(
    hooks: HookEnv, run: Run, fix_window: dict[str, Any]
) -> None:
    (hooks.project / "lib").symlink_to("src")
    new = hooks.project / "lib" / "new.py"
    run_hook(hooks, edit_payload(hooks, "PreToolUse", new, tool="Write"))
    new.write_text("new\n")
    run_hook(hooks, edit_payload(hooks, "PostToolUse", new, tool="Write"))
    assert [(line["kind"], line["path"], line["tool"]) for line in run.ledger()] == [
        ("touch", "src/new.py", "Write"),
        ("wrote", "src/new.py", "Write"),
    ]
    assert edits.rollback(fix_window)["deleted"] == ["src/new.py"]
    assert not (hooks.project / "src" / "new.py").exists()


def test_an_edit_outside_the_project_is_refused_with_a_warning(
    hooks: HookEnv, run: Run, fix_window: dict[str, Any], tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    run_hook(hooks, edit_payload(hooks, "PreToolUse", outside, tool="Write"))
    (touch,) = run.ledger()
    assert (touch["path"], touch["refused"]) == (str(outside.resolve()), "outside_project")
    (warning,) = run.events("WARNING")
    assert (warning["code"], warning["agent"], warning["path"]) == (
        "TOUCH_OUTSIDE_PROJECT",
        "review-fixer",
        str(outside.resolve()),
    )
    assert warning["message"].endswith("fixloop will never roll that file back.")


def test_no_open_window_records_the_touch_only(hooks: HookEnv, run: Run) -> None:
    run_hook(hooks, edit_payload(hooks, "PreToolUse", hooks.project / "src" / "app.py"))
    (touch,) = run.ledger()
    assert (touch["window"], touch["first"]) == (None, False)
    assert not (run.dir / "touches").exists()


@pytest.mark.parametrize(
    "agent_type",
    [None, "general-purpose", "other-plugin:review-fixer"],
    ids=["main thread", "another agent", "another plugin"],
)
def test_anyone_elses_edit_starts_no_interpreter(
    hooks: HookEnv, run: Run, fix_window: dict[str, Any], tmp_path: Path, agent_type: str | None
) -> None:
    marker = spy_python(hooks, tmp_path)
    # The file's content names a fixloop agent type: it is inside a JSON string, where quotes are escaped.
    payload = edit_payload(
        hooks,
        "PreToolUse",
        hooks.project / "notes.md",
        tool="Write",
        agent_type=agent_type,
        content='{"agent_type":"fixloop:review-fixer"}',
    )
    run_hook(hooks, compact(payload))
    run_hook(hooks, compact({**payload, "hook_event_name": "PostToolUse", "tool_response": {}}))
    assert not marker.exists()
    assert run.ledger() == []


def test_a_spaced_payload_of_a_fixloop_agent_is_still_recorded(
    hooks: HookEnv, run: Run, fix_window: dict[str, Any], tmp_path: Path
) -> None:
    marker = spy_python(hooks, tmp_path)
    payload = edit_payload(hooks, "PreToolUse", hooks.project / "src" / "app.py")
    run_hook(hooks, json.dumps(payload, indent=1).encode())
    assert marker.exists()
    assert [line["kind"] for line in run.ledger()] == ["touch"]


def test_a_failing_hook_never_blocks_the_edit_and_says_why(
    hooks: HookEnv, run: Run, fix_window: dict[str, Any]
) -> None:
    (run.dir / "agents.jsonl").mkdir()  # any write to the ledger fails, even as root
    run_hook(hooks, edit_payload(hooks, "PreToolUse", hooks.project / "src" / "app.py"))
    (warning,) = run.events("WARNING")
    assert (warning["code"], warning["hook"]) == ("HOOK_FAILED", "PreToolUse")
    assert "agents.jsonl" in warning["message"]


def test_an_edit_call_without_a_file_is_a_warning(
    hooks: HookEnv, run: Run, fix_window: dict[str, Any]
) -> None:
    payload = edit_payload(hooks, "PreToolUse", "x")
    payload["tool_input"] = {"content": "no path"}
    run_hook(hooks, payload)
    (warning,) = run.events("WARNING")
    assert warning["code"] == "TOUCH_BAD_INPUT"
    assert run.ledger() == []


def test_an_unreadable_payload_fails_open(hooks: HookEnv, run: Run) -> None:
    run_hook(hooks, b'{"agent_type":"fixloop:review-fixer", broken')
    (warning,) = run.events("WARNING")
    assert warning["code"] == "HOOK_BAD_INPUT"


def test_a_session_without_a_run_records_nothing(hooks: HookEnv, tmp_path: Path) -> None:
    run_hook(hooks, edit_payload(hooks, "PreToolUse", hooks.project / "src" / "app.py"))
    assert not (hooks.project / ".claude" / "fixloop" / "runs").exists()
    assert not (hooks.data / "hook-warnings.jsonl").exists()


def test_the_edit_hook_loads_no_heavy_module(hooks: HookEnv, run: Run, fix_window: dict[str, Any]) -> None:
    loaded: set[str] = set()
    for event in ("PreToolUse", "PostToolUse"):
        payload = edit_payload(hooks, event, hooks.project / "src" / "app.py")
        loaded |= modules_imported_by_process(
            [sys.executable, "-E", "-S", "-X", "importtime", str(PLUGIN_ROOT / "hooks" / "file_touch.py")],
            json.dumps(payload).encode(),
            hooks.env,
            hooks.project,
        )
    assert {"fixloop.store.touches", "fixloop.store.logwriter"} <= loaded
    assert in_packages(loaded, (*NOT_IN_HOOKS, "subprocess", "shutil", "hashlib")) == []
    assert [line["kind"] for line in run.ledger()] == ["touch", "wrote"]


def test_a_crashing_interpreter_never_blocks_the_edit(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    crash = write_executable(tmp_path / "crash-python", "#!/bin/sh\nexit 2\n")
    (hooks.data / "python3-path").write_text(f"{crash}\n")
    done = subprocess.run(
        ["sh", str(PLUGIN_ROOT / "hooks" / "run-hook"), "file_touch"],
        input=compact(edit_payload(hooks, "PreToolUse", hooks.project / "src" / "app.py")),
        capture_output=True,
        env=hooks.env,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


# ---- large files: the prior is kept in chunks, or not at all over the limit --------------------------

LARGE_BYTES = 200 << 20
# Address space the hook may use: an interpreter with the hook's modules needs some tens of MB; a prior
# read whole (200 MB) cannot fit.
HOOK_ADDRESS_SPACE_KB = 160 * 1024


def sparse_file(path: Path, size: int, marks: dict[int, bytes]) -> Path:
    """A file of `size` bytes, mostly holes, with `marks` written at their offsets."""
    with path.open("wb") as handle:
        handle.truncate(size)
        for offset, data in marks.items():
            handle.seek(offset)
            handle.write(data)
    return path


def run_hook_in_bounded_memory(hooks: HookEnv, payload: dict[str, Any]) -> None:
    """The edit hook as hooks.json runs it, in a shell whose address space is capped (`ulimit -v`)."""
    command = f"ulimit -v {HOOK_ADDRESS_SPACE_KB} && {hook_command(payload['hook_event_name'], 'Edit')}"
    done = subprocess.run(
        ["sh", "-c", command],
        input=compact(payload),
        capture_output=True,
        env=hooks.env,
        cwd=hooks.project,
        timeout=300,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_200_mb_file_keeps_its_prior_in_bounded_memory_and_is_rolled_back(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    marks = {0: b"head\n", LARGE_BYTES // 2: b"middle\n", LARGE_BYTES - 5: b"tail\n"}
    large = sparse_file(hooks.project / "data.bin", LARGE_BYTES, marks)
    before = sha256_file(large)
    begun = edits.begin(hooks.project, run.dir, "round-1", ["data.bin"])
    run_hook_in_bounded_memory(hooks, edit_payload(hooks, "PreToolUse", large))
    with large.open("r+b") as handle:
        handle.write(b"HACK\n")
    run_hook_in_bounded_memory(hooks, edit_payload(hooks, "PostToolUse", large))
    assert run.events("WARNING") == []
    touch, wrote = run.ledger()
    assert (touch["first"], touch["before_kind"], touch["before_sha256"]) == (True, "file", before)
    assert wrote["after_sha256"] == sha256_file(large) != before
    window = touches.read_window(run.dir, "round-1")
    (prior,) = touches.read_priors(window).values()
    assert sha256_file(Path(touches.prior_path(window, prior))) == before
    report = edits.rollback(begun)
    assert report["restored"] == ["data.bin"]
    assert sha256_file(large) == before
    assert large.stat().st_size == LARGE_BYTES


def test_a_file_over_the_limit_is_named_before_the_edit_and_left_as_is_by_a_rollback(
    hooks: HookEnv, run: Run
) -> None:
    huge = sparse_file(hooks.project / "huge.bin", file_state.MAX_PRIOR_BYTES + 1, {0: b"head\n"})
    begun = edits.begin(hooks.project, run.dir, "round-1", ["huge.bin"])
    run_hook_in_bounded_memory(hooks, edit_payload(hooks, "PreToolUse", huge))
    (warning,) = run.events("WARNING")
    assert (warning["code"], warning["agent"], warning["path"]) == (
        "TOUCH_PRIOR_TOO_LARGE",
        "review-fixer",
        "huge.bin",
    )
    assert warning["message"] == (
        "review-fixer edits huge.bin, which is over 512 MiB: fixloop keeps no copy of it, so a rollback "
        "will leave this file as the agent leaves it."
    )
    (touch,) = run.ledger()
    assert (touch["first"], touch["before_sha256"]) == (False, file_state.TOO_LARGE)
    window = touches.read_window(run.dir, "round-1")
    assert touches.read_priors(window) == {}
    assert list((Path(window["dir"]) / "priors").iterdir()) == []
    with huge.open("r+b") as handle:
        handle.write(b"HACK\n")
    report = edits.rollback(begun)
    assert [(kept["path"], kept["code"]) for kept in report["kept"]] == [("huge.bin", "ROLLBACK_NO_PRIOR")]
    assert huge.read_bytes()[:5] == b"HACK\n"
