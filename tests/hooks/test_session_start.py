"""SessionStart: caches the interpreter for the launcher, starts the environment build, fails open."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from hook_helpers import PLUGIN_ROOT, HookEnv, bare_python, sha256_file, tool_dir, write_executable

from fixloop.hookside.session import building_notice


def payload(hooks: HookEnv) -> dict[str, str]:
    return {**hooks.common("SessionStart"), "source": "startup"}


def wait_for(path: Path, text: str, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    content = ""
    while time.monotonic() < deadline:
        content = path.read_text() if path.exists() else ""
        if text in content:
            return content
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared in {path}: {content!r}")


def test_caches_the_real_interpreter_path(hooks: HookEnv, tmp_path: Path) -> None:
    (hooks.data / "python3-path").unlink()
    # python3 on PATH is a wrapper (like a pyenv shim); the cache must name the interpreter itself.
    tools = tool_dir(tmp_path, Path(sys.executable))
    done = hooks.run("SessionStart", payload(hooks), {"PATH": str(tools), "FIXLOOP_NO_BUILD": "1"})
    assert (done.returncode, done.stdout) == (0, "")
    assert (hooks.data / "python3-path").read_text() == sys.executable + "\n"
    assert not (hooks.data / "bootstrap.log").exists()


def test_starts_a_background_build_when_the_environment_is_missing(hooks: HookEnv, tmp_path: Path) -> None:
    env = dict(hooks.env)
    for name in ("FIXLOOP_NO_BUILD", "FIXLOOP_PYTHON"):
        env.pop(name)
    # A base interpreter that cannot run: the build fails at once, and says so in bootstrap.log.
    env["FIXLOOP_BUILD_PYTHON"] = str(tmp_path / "missing" / "python3")
    done = subprocess.run(
        ["sh", "-c", 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/run-hook" session_start'],
        input=json.dumps(payload(hooks)),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, building_notice(str(hooks.data)) + "\n")
    log = wait_for(hooks.data / "bootstrap.log", "cannot build the environment")
    assert f"cannot run {tmp_path / 'missing' / 'python3'}" in log
    assert not (hooks.data / "venv" / "fixloop-requirements.sha256").exists()


def test_no_build_when_the_environment_is_fresh(hooks: HookEnv) -> None:
    python = hooks.data / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    write_executable(python, f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    digest = sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock")
    (hooks.data / "venv" / "fixloop-requirements.sha256").write_text(digest + "\n")
    env = {"FIXLOOP_NO_BUILD": "", "FIXLOOP_PYTHON": "", "FIXLOOP_BUILD_PYTHON": "/nonexistent/python3"}
    done = hooks.run("SessionStart", payload(hooks), env)
    assert (done.returncode, done.stdout) == (0, "")
    time.sleep(0.5)
    assert not (hooks.data / "bootstrap.log").exists()


def test_no_build_when_an_interpreter_is_configured(hooks: HookEnv) -> None:
    done = hooks.run(
        "SessionStart", payload(hooks), {"FIXLOOP_NO_BUILD": "", "FIXLOOP_BUILD_PYTHON": "/nonexistent"}
    )
    assert (done.returncode, done.stdout) == (0, "")
    time.sleep(0.5)
    assert not (hooks.data / "bootstrap.log").exists()


def test_an_old_interpreter_is_not_cached(hooks: HookEnv, tmp_path: Path) -> None:
    (hooks.data / "python3-path").unlink()
    # An interpreter that reports Python 3.9 to the hook.
    old = write_executable(
        tmp_path / "python3",
        '#!/bin/sh\n[ "$1" = -S ] && shift\n'
        f'exec {sys.executable} -c "import runpy, sys; sys.version_info = (3, 9, 0); '
        "sys.argv = sys.argv[1:]; "
        f'runpy.run_path(sys.argv[0], run_name=\'__main__\')" "$@"\n',
    )
    tools = tool_dir(tmp_path, None, name="tools")
    (tools / "python3").symlink_to(old)
    done = hooks.run("SessionStart", payload(hooks), {"PATH": str(tools), "FIXLOOP_NO_BUILD": "1"})
    assert (done.returncode, done.stdout) == (0, "")
    assert not (hooks.data / "python3-path").exists()


def test_fails_open_when_the_data_directory_cannot_be_created(hooks: HookEnv, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    for stdin in (json.dumps(payload(hooks)), "garbage"):
        done = hooks.run(
            "SessionStart", stdin, {"CLAUDE_PLUGIN_DATA": str(blocker / "data"), "FIXLOOP_NO_BUILD": ""}
        )
        assert (done.returncode, done.stdout) == (0, "")


def test_the_hook_runs_without_dependencies(hooks: HookEnv, tmp_path: Path) -> None:
    bare = bare_python(tmp_path)
    (hooks.data / "python3-path").write_text(f"{bare}\n")
    done = hooks.run("SessionStart", payload(hooks), {"FIXLOOP_NO_BUILD": "1"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert (hooks.data / "python3-path").read_text() == f"{bare}\n"


def test_exports_the_data_directory_for_the_bash_tool(hooks: HookEnv, tmp_path: Path) -> None:
    env_file = tmp_path / "claude-env.sh"
    env_file.write_text("export OTHER=1\n")
    for _ in range(2):
        done = hooks.run(
            "SessionStart", payload(hooks), {"CLAUDE_ENV_FILE": str(env_file), "FIXLOOP_NO_BUILD": "1"}
        )
        assert (done.returncode, done.stdout) == (0, "")
    assert env_file.read_text() == f"export OTHER=1\nexport FIXLOOP_DATA={hooks.data}\n"
    sourced = subprocess.run(
        ["sh", "-c", f'. "{env_file}"; printf %s "$FIXLOOP_DATA"'], capture_output=True, text=True, check=True
    )
    assert sourced.stdout == str(hooks.data)


def test_the_first_commands_line_says_the_environment_was_set_up_first(tmp_path: Path) -> None:
    """A slash command's `!` line that had to build (or wait for SessionStart's build) says so; later
    commands start at once and say nothing of it."""
    from hook_helpers import base_env, copy_plugin, fake_uv

    plugin = copy_plugin(tmp_path)
    tools = tool_dir(tmp_path, bare_python(tmp_path))
    fake_uv(tools)
    project = tmp_path / "project"
    project.mkdir()
    env = {
        **base_env(),
        "PATH": str(tools),
        "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"),
        "CLAUDE_PROJECT_DIR": str(project),
        "HOME": str(tmp_path),
    }

    def start() -> list[str]:
        done = subprocess.run(
            [str(plugin / "scripts" / "fixloop"), "start", "review"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        return done.stdout.splitlines()

    first = start()
    assert re.fullmatch(
        r"fixloop: its Python environment was set up first \(\d+ s, once per plugin version\)\.", first[0]
    ), first
    assert len(first) > 1  # the engine's own answer follows
    later = start()
    assert not [line for line in later if "environment was set up" in line] and later
