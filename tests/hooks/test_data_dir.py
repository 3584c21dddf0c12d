"""One data-directory rule: the engine's, bootstrap's, and the one shell line in each launcher agree."""

from __future__ import annotations

import os
import re
import subprocess
import sys

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


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_copy_of_the_rule_gives_the_same_directory(env: dict[str, str]) -> None:
    expected = data_dir(env)
    assert in_shell(shell_line("scripts/fixloop", "data"), "data", env) == expected
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
