"""`fixloop` from a terminal and the installed plugin's sessions keep approvals in one place, whichever
comes first: before the plugin's first session, a terminal uses the data directory Claude Code will give
the installed plugin; approvals a never-installed clone stored are read by the plugin too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hook_helpers import PLUGIN_ROOT, base_env

CHECK = f"{sys.executable} -c pass"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "fixloop.json").write_text(
        json.dumps({"test_command": CHECK, "detect_commands": False})
    )
    return root


def fixloop(root: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    done = subprocess.run(
        [str(PLUGIN_ROOT / "scripts" / "fixloop"), *args], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def terminal_env(home: Path, config: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in base_env().items()
        if key not in ("CLAUDE_PLUGIN_DATA", "FIXLOOP_DATA", "CLAUDE_CONFIG_DIR")
    }
    env.update(
        HOME=str(home), CLAUDE_CONFIG_DIR=str(config), FIXLOOP_PYTHON=sys.executable, FIXLOOP_NO_BUILD="1"
    )
    return env


def installed(config: Path, marketplace: str) -> None:
    plugins = config / "plugins"
    plugins.mkdir(parents=True)
    entry = {"scope": "user", "installPath": str(PLUGIN_ROOT), "version": "0.1.0"}
    document = {"version": 2, "plugins": {"other@x": [entry], f"fixloop@{marketplace}": [entry]}}
    (plugins / "installed_plugins.json").write_text(json.dumps(document, indent=2))


def test_a_terminal_before_the_first_session_approves_in_the_installed_plugins_data_directory(
    tmp_path: Path,
) -> None:
    home, config = tmp_path / "home", tmp_path / "config"
    root = project(tmp_path)
    installed(config, "team-tools")
    approved = fixloop(root, terminal_env(home, config), "trust")
    data = config / "plugins" / "data" / "fixloop-team-tools"
    assert Path(str(approved["approvals_file"])).parent == data / "approvals"
    assert not (home / ".cache").exists()
    # the plugin's first session: its hooks and the Bash tool get this directory as CLAUDE_PLUGIN_DATA
    session = {**terminal_env(home, config), "CLAUDE_PLUGIN_DATA": str(data)}
    assert fixloop(root, session, "trust", "--show")["status"] == "approved"


def test_approvals_a_never_installed_clone_stored_hold_for_the_plugin(tmp_path: Path) -> None:
    home, config = tmp_path / "home", tmp_path / "config"
    root = project(tmp_path)
    approved = fixloop(root, terminal_env(home, config), "trust")
    assert Path(str(approved["approvals_file"])).parent == home / ".cache" / "fixloop" / "approvals"
    data = config / "plugins" / "data" / "fixloop-fixloop"
    session = {**terminal_env(home, config), "CLAUDE_PLUGIN_DATA": str(data)}
    assert fixloop(root, session, "trust", "--show")["status"] == "approved"
    (root / ".claude" / "fixloop.json").write_text(json.dumps({"test_command": "make test"}))
    assert fixloop(root, session, "trust", "--show")["status"] == "not_approved"
