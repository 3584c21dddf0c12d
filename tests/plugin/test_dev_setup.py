"""scripts/dev/setup --core (what the demo runs) never calls apt-get: an apt lock cannot stop the demo."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def stub(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    path.chmod(0o755)


def fake_checkout(tmp_path: Path) -> Path:
    """A checkout whose venv is already set up (its stamp matches) and that has no CLI lock or samples."""
    root = tmp_path / "checkout"
    (root / "scripts" / "dev").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "dev" / "setup", root / "scripts" / "dev" / "setup")
    shutil.copy2(ROOT / "scripts" / "dev" / "demo", root / "scripts" / "dev" / "demo")
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    shutil.copy2(ROOT / "scripts" / "requirements.lock", root / "scripts" / "requirements.lock")
    (root / ".venv" / "bin").mkdir(parents=True)
    stub(root / ".venv" / "bin" / "python", 'echo "demo ran: $*"')
    both = (root / "pyproject.toml").read_bytes() + (root / "scripts" / "requirements.lock").read_bytes()
    (root / ".venv" / ".fixloop-setup-stamp").write_text(hashlib.sha256(both).hexdigest() + "\n")
    return root


def locked_apt(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """PATH with an apt-get that finds its lock held (and logs each call), a sudo that runs it, no gh."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "apt-calls"
    stub(
        bin_dir / "apt-get",
        f'echo "$*" >> {calls}\necho "E: Could not get lock /var/lib/dpkg/lock" >&2\nexit 100',
    )
    stub(bin_dir / "sudo", 'shift; exec "$@"')
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "CHROMIUM_PATH": str(tmp_path / "no-chromium")}
    return env, calls


def test_the_full_setup_stops_on_an_apt_lock_and_the_core_setup_and_demo_do_not_call_apt(
    tmp_path: Path,
) -> None:
    root = fake_checkout(tmp_path)
    env, calls = locked_apt(tmp_path)
    full = subprocess.run(["bash", "scripts/dev/setup"], cwd=root, env=env, capture_output=True, text=True)
    assert full.returncode != 0 and calls.read_text().splitlines()[0] == "update -qq"
    calls.unlink()
    core = subprocess.run(
        ["bash", "scripts/dev/setup", "--core"], cwd=root, env=env, capture_output=True, text=True
    )
    assert (core.returncode, core.stderr, calls.exists()) == (0, "", False)
    demo = subprocess.run(
        ["bash", "scripts/dev/demo", "--engine"], cwd=root, env=env, capture_output=True, text=True
    )
    assert (demo.returncode, demo.stdout, calls.exists()) == (
        0,
        "demo ran: scripts/dev/demo_engine.py\n",
        False,
    )
    wrong = subprocess.run(
        ["bash", "scripts/dev/setup", "--all"], cwd=root, env=env, capture_output=True, text=True
    )
    assert (wrong.returncode, wrong.stderr) == (2, "usage: scripts/dev/setup [--core]\n")


CLAUDE = ROOT / "tests" / "e2e" / "node_modules" / ".bin" / "claude"
FAKE_PYTHON = """if [ "$1" = -m ] && [ "$2" = venv ]; then
  mkdir -p "$3/bin"
  printf '#!/bin/sh\\necho "pip $*" >> {log}\\n' > "$3/bin/python"
  chmod +x "$3/bin/python"
fi"""
FAKE_NPM = """echo "npm $* in $PWD" >> {log}
mkdir -p node_modules/.bin node_modules/big
head -c 100000 /dev/zero > node_modules/big/blob
printf '#!/bin/sh\\n' > node_modules/.bin/claude && chmod +x node_modules/.bin/claude"""


def fresh_checkout_as_plugin(tmp_path: Path) -> Path:
    """A checkout never set up, that is also a plugin with its marketplace (as this repository is)."""
    root = fake_checkout(tmp_path)
    shutil.rmtree(root / ".venv")
    shutil.copytree(ROOT / ".claude-plugin", root / ".claude-plugin")
    (root / "tests" / "e2e").mkdir(parents=True)
    (root / "tests" / "e2e" / "package.json").write_text("{}\n")
    (root / "tests" / "e2e" / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    return root


def test_setup_keeps_the_dev_environment_outside_the_checkout_so_an_install_copies_none_of_it(
    tmp_path: Path,
) -> None:
    root = fresh_checkout_as_plugin(tmp_path)
    tools, log, dev_home = tmp_path / "tools", tmp_path / "calls", tmp_path / "dev-home"
    tools.mkdir()
    stub(tools / "python3", FAKE_PYTHON.format(log=log))
    stub(tools / "npm", FAKE_NPM.format(log=log))
    env = {**os.environ, "PATH": f"{tools}:/usr/bin:/bin", "FIXLOOP_DEV_HOME": str(dev_home)}
    done = subprocess.run(
        ["bash", "scripts/dev/setup", "--core"], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    key = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    assert os.readlink(root / ".venv") == str(dev_home / key / "venv")
    outside_npm = dev_home / key / "npm" / "tests_e2e" / "node_modules"
    assert os.readlink(root / "tests" / "e2e" / "node_modules") == str(outside_npm)
    assert (root / "tests" / "e2e" / "node_modules" / ".bin" / "claude").is_file()
    calls = log.read_text().splitlines()
    assert calls[-1] == f"npm ci --no-audit --no-fund --loglevel=error in {outside_npm.parent}"
    assert "pip -m pip install --quiet --disable-pip-version-check -e .[dev]" in calls
    again = subprocess.run(
        ["bash", "scripts/dev/setup", "--core"], cwd=root, env=env, capture_output=True, text=True
    )
    assert (again.returncode, log.read_text().splitlines()) == (0, calls)  # set up: nothing runs again

    if not CLAUDE.exists():
        pytest.skip("the pinned Claude Code CLI is not installed (scripts/dev/setup)")
    config = tmp_path / "claude-config"
    cli_env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path / "home")}
    for command in (["marketplace", "add", str(root)], ["install", "fixloop@fixloop"]):
        added = subprocess.run(
            [str(CLAUDE), "plugin", *command], env=cli_env, capture_output=True, text=True, timeout=300
        )
        assert added.returncode == 0, added.stdout + added.stderr
    copies = [
        path
        for path in (config / "plugins" / "cache").rglob("plugin.json")
        if path.parent.name == ".claude-plugin"
    ]
    assert len(copies) == 1
    copy = copies[0].parent.parent
    assert (copy / "scripts" / "dev" / "setup").is_file()
    assert not (copy / ".venv").exists() and not (copy / "tests" / "e2e" / "node_modules").exists()
