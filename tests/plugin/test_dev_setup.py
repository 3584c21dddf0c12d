"""scripts/dev/setup --core (what the demo runs) never calls apt-get: an apt lock cannot stop the demo."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

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
