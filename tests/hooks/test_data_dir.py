"""One data-directory rule: the engine's, bootstrap's, the hook launcher's and the entry point's agree (the
entry point also finds the installed plugin's directory from a terminal: tests/hooks/test_entry_point.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hook_helpers import PLUGIN_ROOT

from fixloop.core.datadir import data_dir

ENVIRONMENTS = [
    {"CLAUDE_PLUGIN_DATA": "/p", "FIXLOOP_DATA": "/f", "HOME": "/h"},
    {"CLAUDE_PLUGIN_DATA": "", "FIXLOOP_DATA": "/f", "HOME": "/h"},
    {"FIXLOOP_DATA": "/f", "HOME": "/h"},
    {"FIXLOOP_DATA": "", "HOME": "/h"},
    {"HOME": "/h"},
    {"HOME": ""},
    {},
]


def shell_line(script: str, variable: str) -> str:
    """The one line of `script` that sets `variable` from the data-directory rule."""
    text = (PLUGIN_ROOT / script).read_text(encoding="utf-8")
    lines = [line.strip() for line in text.splitlines() if "CLAUDE_PLUGIN_DATA:-" in line]
    assert len(lines) == 1, f"{script} spells the data-directory rule {len(lines)} times"
    assert re.match(rf"{variable}=", lines[0]), lines[0]
    return lines[0]


def in_shell(line: str, variable: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["sh", "-c", f'{line}\nprintf %s "${variable}"'],
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def entry_point_data_dir(env: dict[str, str], tmp_path: Path) -> str:
    """The data directory scripts/fixloop hands the engine (FIXLOOP_DATA), seen by a stand-in interpreter."""
    python = tmp_path / "python"
    python.write_text('#!/bin/sh\nif [ "$1" = -c ]; then echo "$0"; exit 0; fi\nprintf %s "$FIXLOOP_DATA"\n')
    python.chmod(0o755)
    done = subprocess.run(
        [str(PLUGIN_ROOT / "scripts" / "fixloop"), "--version"],
        env={"PATH": os.environ["PATH"], **env, "FIXLOOP_PYTHON": str(python)},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_copy_of_the_rule_gives_the_same_directory(env: dict[str, str], tmp_path: Path) -> None:
    expected = data_dir(env)
    if env.get("HOME"):  # the entry point caches its interpreter check there: keep it inside tmp_path
        inside = {key: str(tmp_path) + value if value else value for key, value in env.items()}
        assert entry_point_data_dir(inside, tmp_path) == str(tmp_path) + expected
    launcher = in_shell(shell_line("hooks/run-hook", "cached"), "cached", env)
    assert launcher == f"{expected}/python3-path"
    code = "import sys; sys.path.insert(0, 'scripts'); import bootstrap; print(bootstrap.data_dir(), end='')"
    done = subprocess.run(
        [sys.executable, "-E", "-S", "-c", code],
        cwd=PLUGIN_ROOT,
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == expected


def test_the_rule() -> None:
    assert data_dir({"CLAUDE_PLUGIN_DATA": "/p", "FIXLOOP_DATA": "/f"}) == "/p"
    assert data_dir({"FIXLOOP_DATA": "/f", "HOME": "/h"}) == "/f"
    assert data_dir({"HOME": "/h"}) == "/h/.cache/fixloop"
    assert data_dir({}) == "/tmp/.cache/fixloop"
