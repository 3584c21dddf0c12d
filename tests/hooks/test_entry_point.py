"""scripts/fixloop: which interpreter runs the engine, the environment build, ENGINE_UNAVAILABLE."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hook_helpers import (
    PLUGIN_ROOT,
    bare_python,
    base_env,
    copy_plugin,
    fake_uv,
    sha256_file,
    tool_dir,
    write_executable,
)

VERSION_LINE = "fixloop, version 0.1.0\n"
NETWORK_SKIP = "FIXLOOP_SKIP_NETWORK_TESTS"


def entry(
    plugin: Path, data: Path, args: list[str], path: Path, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = base_env()
    env.update(PATH=str(path), CLAUDE_PLUGIN_DATA=str(data), HOME=str(data.parent))
    env.update(extra or {})
    return subprocess.run(
        [str(plugin / "scripts" / "fixloop"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def builds(data: Path) -> list[str]:
    log = data / "venv-builds.log"
    return log.read_text().splitlines() if log.exists() else []


def stamp(data: Path) -> str:
    return (data / "venv" / "fixloop-requirements.sha256").read_text().strip()


def test_no_working_interpreter_prints_engine_unavailable(tmp_path: Path) -> None:
    bare = bare_python(tmp_path)
    tools = tool_dir(tmp_path, bare)
    data = tmp_path / "data"
    done = entry(
        PLUGIN_ROOT, data, ["phases", "bugfix"], tools, {"FIXLOOP_PYTHON": str(bare), "FIXLOOP_NO_BUILD": "1"}
    )
    assert done.returncode == 3
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    doc = json.loads(lines[0])
    assert doc["status"] == "failed"
    error = doc["error"]
    assert sorted(error) == ["code", "message", "suggestion", "tried"]
    assert error["code"] == "ENGINE_UNAVAILABLE"
    assert (
        error["message"] == "No Python interpreter with the engine's dependencies, and building is disabled."
    )
    assert "FIXLOOP_PYTHON" in error["suggestion"]
    assert error["tried"] == [
        f"FIXLOOP_PYTHON={bare}: not Python 3.10+ with click, jsonschema and pydantic",
        f"python3 on PATH ({tools / 'python3'}): lacks click, jsonschema or pydantic",
        f"building {data / 'venv'}: disabled by FIXLOOP_NO_BUILD",
    ]


def test_no_python_at_all_prints_engine_unavailable(tmp_path: Path) -> None:
    tools = tool_dir(tmp_path, None)
    done = entry(PLUGIN_ROOT, tmp_path / "data", ["--version"], tools)
    assert done.returncode == 3
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "ENGINE_UNAVAILABLE"
    assert error["tried"] == [
        "python3: not on PATH",
        f"building {tmp_path / 'data' / 'venv'}: no python3 to build it with",
    ]


def test_a_failed_build_prints_engine_unavailable_with_the_reason(tmp_path: Path) -> None:
    tools = tool_dir(tmp_path, bare_python(tmp_path))
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    data = blocker / "data"  # cannot be created: the build fails at once, before any download
    done = entry(PLUGIN_ROOT, data, ["--version"], tools)
    assert done.returncode == 3
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "ENGINE_UNAVAILABLE"
    assert (
        error["message"] == "No Python interpreter with the engine's dependencies, and building them failed."
    )
    assert error["tried"][-1].startswith(
        f"building {data / 'venv'} with {tools / 'python3'}: cannot build the environment:"
    )
    assert "Not a directory" in error["tried"][-1]


def test_fixloop_python_with_the_dependencies_runs_the_engine(tmp_path: Path) -> None:
    tools = tool_dir(tmp_path, None)
    data = tmp_path / "data"
    done = entry(PLUGIN_ROOT, data, ["phases", "bugfix"], tools, {"FIXLOOP_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["workflow"] == "bugfix"
    assert builds(data) == []


def test_python3_on_path_is_checked_once_and_cached(tmp_path: Path) -> None:
    calls = tmp_path / "python3-calls.log"
    tools = tool_dir(tmp_path, None)
    write_executable(tools / "python3", f'#!/bin/sh\necho call >> {calls}\nexec {sys.executable} "$@"\n')
    data = tmp_path / "data"
    for _ in range(2):
        done = entry(PLUGIN_ROOT, data, ["--version"], tools)
        assert (done.returncode, done.stdout) == (0, VERSION_LINE), done.stderr
    cache = (data / "interpreters.tsv").read_text().splitlines()
    digest = sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock")
    assert cache == [f"{digest}\tok\t{tools / 'python3'}\t{sys.executable}"]
    # The wrapper ran once (the check); the engine itself ran on the real interpreter both times.
    assert calls.read_text() == "call\n"
    assert builds(data) == []


def fake_venv(data: Path, digest: str, log: Path) -> None:
    python = data / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    write_executable(python, f'#!/bin/sh\necho used >> {log}\nexec {sys.executable} "$@"\n')
    (data / "venv" / "fixloop-requirements.sha256").write_text(digest + "\n")


def test_a_fresh_environment_is_preferred_and_a_stale_one_ignored(tmp_path: Path) -> None:
    tools = tool_dir(tmp_path, Path(sys.executable))
    digest = sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock")
    fresh, stale = tmp_path / "fresh", tmp_path / "stale"
    fresh_log, stale_log = tmp_path / "fresh.log", tmp_path / "stale.log"
    fake_venv(fresh, digest, fresh_log)
    fake_venv(stale, "0" * 64, stale_log)
    for data in (fresh, stale):
        done = entry(PLUGIN_ROOT, data, ["--version"], tools, {"FIXLOOP_NO_BUILD": "1"})
        assert (done.returncode, done.stdout) == (0, VERSION_LINE), done.stderr
    assert fresh_log.read_text() == "used\n"
    assert not stale_log.exists()


def test_fixloop_data_names_the_data_directory_outside_hooks(tmp_path: Path) -> None:
    """The Bash tool has no CLAUDE_PLUGIN_DATA; SessionStart exported FIXLOOP_DATA for it."""
    tools = tool_dir(tmp_path, None)
    data, log = tmp_path / "exported", tmp_path / "venv.log"
    fake_venv(data, sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock"), log)
    env = base_env()
    env.update(PATH=str(tools), FIXLOOP_DATA=str(data), HOME=str(tmp_path / "home"), FIXLOOP_NO_BUILD="1")
    done = subprocess.run(
        [str(PLUGIN_ROOT / "scripts" / "fixloop"), "--version"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, VERSION_LINE), done.stderr
    assert log.read_text() == "used\n"


def test_a_symlink_to_the_entry_point_finds_the_engine(tmp_path: Path) -> None:
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    (link_dir / "fixloop").symlink_to(PLUGIN_ROOT / "scripts" / "fixloop")
    env = {**base_env(), "FIXLOOP_PYTHON": sys.executable, "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    done = subprocess.run(
        [str(link_dir / "fixloop"), "--version"], capture_output=True, text=True, env=env, check=False
    )
    assert (done.returncode, done.stdout) == (0, VERSION_LINE), done.stderr


def test_builds_with_uv_reuses_and_rebuilds_when_the_requirements_change(tmp_path: Path) -> None:
    plugin = copy_plugin(tmp_path)
    tools = tool_dir(tmp_path, bare_python(tmp_path))
    fake_uv(tools)
    data = tmp_path / "data"
    lock = plugin / "scripts" / "requirements.lock"

    done = entry(plugin, data, ["--version"], tools)
    assert (done.returncode, done.stdout) == (0, VERSION_LINE), done.stderr
    assert "building" in done.stderr
    assert len(builds(data)) == 1
    assert stamp(data) == sha256_file(lock)
    assert " uv " in builds(data)[0]

    done = entry(plugin, data, ["--version"], tools)
    assert (done.returncode, done.stdout, done.stderr) == (0, VERSION_LINE, "")
    assert len(builds(data)) == 1

    lock.write_text(lock.read_text() + "# changed\n")
    done = entry(plugin, data, ["--version"], tools)
    assert (done.returncode, done.stdout) == (0, VERSION_LINE), done.stderr
    assert len(builds(data)) == 2
    assert stamp(data) == sha256_file(lock)
    uv_calls = (tools / "uv-calls.log").read_text().splitlines()
    assert [call.split()[0:2] for call in uv_calls] == [["venv", "--quiet"], ["pip", "install"]] * 2
    assert all(call.endswith(f"-r {lock}") for call in uv_calls if call.startswith("pip"))


def test_two_concurrent_starts_build_once(tmp_path: Path) -> None:
    tools = tool_dir(tmp_path, bare_python(tmp_path))
    fake_uv(tools, sleep=2.0)
    data = tmp_path / "data"
    env = {**base_env(), "PATH": str(tools), "CLAUDE_PLUGIN_DATA": str(data), "HOME": str(tmp_path)}
    procs = [
        subprocess.Popen(
            [str(PLUGIN_ROOT / "scripts" / "fixloop"), "--version"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=300) for proc in procs]
    assert [(proc.returncode, out) for proc, (out, _err) in zip(procs, outputs, strict=True)] == [
        (0, VERSION_LINE),
        (0, VERSION_LINE),
    ]
    assert len(builds(data)) == 1
    assert any("waiting" in err for _out, err in outputs)


def test_session_start_builds_in_the_background_and_the_entry_point_waits_for_it(tmp_path: Path) -> None:
    tools = tool_dir(tmp_path, bare_python(tmp_path))
    fake_uv(tools, sleep=2.0)
    data = tmp_path / "data"
    env = {
        **base_env(),
        "PATH": str(tools),
        "CLAUDE_PLUGIN_ROOT": str(PLUGIN_ROOT),
        "CLAUDE_PLUGIN_DATA": str(data),
        "HOME": str(tmp_path),
    }
    payload = json.dumps(
        {
            "session_id": "s",
            "transcript_path": "/t",
            "cwd": str(tmp_path),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )
    command = json.loads((PLUGIN_ROOT / "hooks" / "hooks.json").read_text())["hooks"]["SessionStart"][0][
        "hooks"
    ][0]["command"]
    hook = subprocess.run(
        ["sh", "-c", command], input=payload, capture_output=True, text=True, env=env, check=False
    )
    notice = (
        "fixloop is building its Python environment in the background (the first session only: a minute or "
        f"two). A /fixloop command started meanwhile waits for it. Progress: {data / 'bootstrap.log'}"
    )
    assert (hook.returncode, json.loads(hook.stdout)) == (0, {"systemMessage": notice})
    deadline = time.monotonic() + 30
    while not builds(data) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(builds(data)) == 1  # started by the hook, still running (uv sleeps 2 s)
    done = entry(PLUGIN_ROOT, data, ["--version"], tools)
    assert (done.returncode, done.stdout) == (0, VERSION_LINE), done.stderr
    assert len(builds(data)) == 1
    assert stamp(data) == sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock")


@pytest.mark.skipif(bool(os.environ.get(NETWORK_SKIP)), reason=f"{NETWORK_SKIP} is set (needs PyPI)")
def test_real_build_from_pypi_with_venv_and_pip(tmp_path: Path) -> None:
    """The real thing: no uv, `python -m venv` + pip installing scripts/requirements.lock from the index."""
    tools = tool_dir(tmp_path, bare_python(tmp_path))
    data = tmp_path / "data"
    done = entry(PLUGIN_ROOT, data, ["phases", "bugfix"], tools)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["workflow"] == "bugfix"  # stdout holds the engine's JSON only
    assert "venv+pip" in builds(data)[0]
    assert stamp(data) == sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock")
    freeze = subprocess.run(
        [str(data / "venv" / "bin" / "python"), "-m", "pip", "freeze"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    pins = [
        line.split(";")[0].strip().lower()
        for line in (PLUGIN_ROOT / "scripts" / "requirements.lock").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    for pin in pins:
        name, version = pin.split("==")
        if name == "rpds-py" and (version == "0.30.0") != (sys.version_info < (3, 11)):
            continue
        normalized = name.replace("_", "-")
        assert any(line.replace("_", "-") == f"{normalized}=={version}" for line in freeze.splitlines()), (
            pin,
            freeze,
        )
    again = entry(PLUGIN_ROOT, data, ["--version"], tools)
    assert (again.returncode, again.stdout, again.stderr) == (0, VERSION_LINE, "")
    assert len(builds(data)) == 1


def test_a_failed_build_leaves_an_engine_build_failed_warning(tmp_path: Path) -> None:
    data = tmp_path / "data"
    requirements = tmp_path / "requirements.lock"
    requirements.write_text("fixloop-no-such-package==1.0\n")
    env = base_env()
    env.update(
        PATH=str(tool_dir(tmp_path, Path(sys.executable))),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS="",
        PIP_CONFIG_FILE=os.devnull,
        CLAUDE_CODE_SESSION_ID="session-build",
    )
    done = subprocess.run(
        [
            sys.executable,
            str(PLUGIN_ROOT / "scripts" / "bootstrap.py"),
            "ensure",
            "--data",
            str(data),
            "--requirements",
            str(requirements),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode != 0
    (warning,) = [json.loads(line) for line in (data / "hook-warnings.jsonl").read_text().splitlines()]
    assert (warning["level"], warning["type"], warning["code"], warning["session_id"]) == (
        "W",
        "WARNING",
        "ENGINE_BUILD_FAILED",
        "session-build",
    )
    assert warning["message"].startswith("cannot build the environment:")
    assert warning["data_dir"] == str(data)
    assert not (data / "venv" / "fixloop-requirements.sha256").exists()  # no stamp: nothing counts as built


# ---- an unreachable package index: one clear sentence, one failed build, then a wait ----------------

UNREACHABLE_INDEX = {
    "PIP_INDEX_URL": "http://127.0.0.1:9/simple",  # the discard port: the connection is refused
    "PIP_CONFIG_FILE": os.devnull,
    "PIP_FIND_LINKS": "",
}


def test_an_unreachable_index_says_what_to_do_in_one_sentence_and_is_not_retried_at_once(
    tmp_path: Path,
) -> None:
    bare = bare_python(tmp_path)
    tools = tool_dir(tmp_path, bare)  # no uv: venv + pip, as on a fresh machine
    data = tmp_path / "data"
    engine = PLUGIN_ROOT / "scripts" / "fixloop"
    done = entry(PLUGIN_ROOT, data, ["start", "review"], tools, UNREACHABLE_INDEX)
    assert done.returncode == 3
    details = data / "venv-build-output.log"
    assert done.stdout == (
        "fixloop cannot start: pip could not download click, jsonschema and pydantic from the package index "
        f"(details: {details}). Give fixloop Python 3.10 or newer as python3 on PATH with the package index "
        "reachable (PyPI, or your mirror in PIP_INDEX_URL) and run "
        f'"{engine}" --version once to build {data / "venv"}, or set FIXLOOP_PYTHON to a Python that has '
        "click>=8.1, jsonschema>=4.18 and pydantic>=2.6. (ENGINE_UNAVAILABLE)\n"
    )
    # pip's own output went to the details file, not to the screen
    assert done.stderr.splitlines() == [
        f"fixloop bootstrap: building {data / 'venv'} with venv+pip from {bare} "
        "(one-time; reused until requirements change)"
    ]
    assert "Connection refused" in details.read_text()
    assert len(builds(data)) == 1

    # The next call, from a program, answers JSON at once without building again.
    again = entry(PLUGIN_ROOT, data, ["phases", "review"], tools, UNREACHABLE_INDEX)
    assert (again.returncode, again.stderr) == (3, "")
    error = json.loads(again.stdout)["error"]
    assert error["code"] == "ENGINE_UNAVAILABLE"
    assert error["tried"][-1].endswith(
        "pip could not download click, jsonschema and pydantic from the package index "
        f"(details: {details}); fixloop tries again in 5 min (FIXLOOP_FORCE_BUILD=1 tries at once)"
    )
    assert len(builds(data)) == 1
    record = json.loads((data / "venv-build-failed.json").read_text())
    assert (record["failures"], record["requirements"]) == (
        1,
        sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock"),
    )

    # A new session does not start a build in the background either.
    hook_env = {
        **base_env(),
        "PATH": str(tools),
        "CLAUDE_PLUGIN_ROOT": str(PLUGIN_ROOT),
        "CLAUDE_PLUGIN_DATA": str(data),
        "HOME": str(tmp_path),
    }
    command = json.loads((PLUGIN_ROOT / "hooks" / "hooks.json").read_text())["hooks"]["SessionStart"][0][
        "hooks"
    ][0]["command"]
    hook = subprocess.run(["sh", "-c", command], input="{}", capture_output=True, text=True, env=hook_env)
    assert (hook.returncode, hook.stdout) == (0, "")
    assert not (data / "bootstrap.log").exists()  # the hook starts a build by opening this log

    # Asked to, it tries again; the second failure in a row doubles the wait.
    forced = entry(PLUGIN_ROOT, data, ["--version"], tools, {**UNREACHABLE_INDEX, "FIXLOOP_FORCE_BUILD": "1"})
    assert forced.returncode == 3
    assert len(builds(data)) == 2
    assert json.loads((data / "venv-build-failed.json").read_text())["failures"] == 2
    later = entry(PLUGIN_ROOT, data, ["--version"], tools, UNREACHABLE_INDEX)
    assert "fixloop tries again in 10 min" in json.loads(later.stdout)["error"]["tried"][-1]


def test_a_successful_build_clears_the_failure_record(tmp_path: Path) -> None:
    tools = tool_dir(tmp_path, bare_python(tmp_path))
    fake_uv(tools)
    data = tmp_path / "data"
    data.mkdir()
    digest = sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock")
    (data / "venv-build-failed.json").write_text(
        json.dumps({"requirements": digest, "failed_at": time.time() - 301.0, "failures": 1, "reason": "x"})
    )
    done = entry(PLUGIN_ROOT, data, ["--version"], tools)  # the 5 minutes are over
    assert (done.returncode, done.stdout) == (0, VERSION_LINE), done.stderr
    assert not (data / "venv-build-failed.json").exists()


# ---- a terminal finds the plugin's own environment instead of building a second one ------------------


@pytest.mark.parametrize("config_dir", [None, "custom-config"])
def test_a_terminal_uses_the_environment_of_the_installed_plugin(
    tmp_path: Path, config_dir: str | None
) -> None:
    tools = tool_dir(tmp_path, None)
    home = tmp_path / "home"
    config = tmp_path / config_dir if config_dir else home / ".claude"
    digest = sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock")
    stale_log, fresh_log = tmp_path / "stale.log", tmp_path / "fresh.log"
    fake_venv(config / "plugins" / "data" / "fixloop-inline", "0" * 64, stale_log)
    fake_venv(config / "plugins" / "data" / "fixloop-fixloop", digest, fresh_log)
    (config / "plugins" / "data" / "other-plugin").mkdir()
    env = base_env()
    env.update(PATH=str(tools), HOME=str(home), FIXLOOP_NO_BUILD="1")
    if config_dir:
        env["CLAUDE_CONFIG_DIR"] = str(config)
    done = subprocess.run(
        [str(PLUGIN_ROOT / "scripts" / "fixloop"), "--version"], capture_output=True, text=True, env=env
    )
    assert (done.returncode, done.stdout) == (0, VERSION_LINE), done.stderr
    assert fresh_log.read_text() == "used\n"
    assert not stale_log.exists()
    assert not (home / ".cache").exists()  # no second environment


# ---- a broken environment: said in JSON, rebuilt once ---------------------------------------------------


def test_a_broken_environment_is_rebuilt_once_then_left_to_the_user(tmp_path: Path) -> None:
    import venv

    tools = tool_dir(tmp_path, bare_python(tmp_path))
    fake_uv(tools)
    data = tmp_path / "data"
    broken = data / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(broken)  # a stamp, but no click, no pydantic
    digest = sha256_file(PLUGIN_ROOT / "scripts" / "requirements.lock")
    (broken / "fixloop-requirements.sha256").write_text(digest + "\n")

    done = entry(PLUGIN_ROOT, data, ["phases", "review"], tools)
    assert done.returncode == 4
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "ENGINE_BROKEN"
    assert (
        error["message"]
        == "A dependency of the engine does not load (ModuleNotFoundError: No module named 'click')."
    )
    assert error["suggestion"] == (
        f"fixloop's environment at {broken} is broken. fixloop rebuilds it on the next command; run it again."
    )
    assert "Traceback" not in done.stderr
    assert not (broken / "fixloop-requirements.sha256").exists()

    rebuilt = entry(PLUGIN_ROOT, data, ["phases", "review"], tools)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout)["workflow"] == "review"
    assert len(builds(data)) == 1

    # broken again within the hour: not rebuilt in a loop
    for name in ("click",):
        for site in (data / "venv").glob("lib/python*/site-packages"):
            target = site / name
            if target.is_symlink() or target.exists():
                target.unlink() if target.is_symlink() else None
            (site / f"{name}.py").write_text("raise ImportError('corrupt click')\n")
    again = entry(PLUGIN_ROOT, data, ["phases", "review"], tools)
    assert again.returncode == 4
    error = json.loads(again.stdout)["error"]
    assert error["message"] == "A dependency of the engine does not load (ImportError: corrupt click)."
    assert "rebuilt once and is still broken" in error["suggestion"]
    assert (data / "venv" / "fixloop-requirements.sha256").exists()


def test_a_broken_interpreter_of_the_user_is_not_touched(tmp_path: Path) -> None:
    """FIXLOOP_PYTHON names a Python whose pydantic is half installed: reported, nothing of it removed."""
    import sysconfig
    import venv

    target = tmp_path / "users-venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    (site,) = target.glob("lib/python*/site-packages")
    real = Path(sysconfig.get_paths()["purelib"])
    for entry_path in real.iterdir():
        if entry_path.name != "pydantic":
            (site / entry_path.name).symlink_to(entry_path)
    (site / "pydantic").mkdir()
    (site / "pydantic" / "__init__.py").write_text("raise ImportError('half-installed pydantic')\n")
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"status": "success", "agent": "code-reviewer", "issues": []}))
    python = target / "bin" / "python"
    done = entry(
        PLUGIN_ROOT,
        tmp_path / "data",
        ["validate", "reviewer", str(answer)],
        tool_dir(tmp_path, None),
        {"FIXLOOP_PYTHON": str(python)},
    )
    assert done.returncode == 4, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "ENGINE_BROKEN"
    assert (
        error["message"] == "A dependency of the engine does not load (ImportError: half-installed pydantic)."
    )
    assert "unset FIXLOOP_PYTHON" in error["suggestion"]
    assert (site / "pydantic" / "__init__.py").exists()
