"""Whatever bytes a caller passes, every command prints valid UTF-8 (and JSON where it prints JSON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers_runs import LIB

from fixloop.runs import creation

BAD = b"caf\xff"  # not UTF-8


@pytest.mark.parametrize(
    "args",
    [
        [b"run", b"show", BAD],
        [b"review", b"report", BAD],
        [b"log", b"summary", BAD],
        [b"validate", b"reviewer", BAD],
        [b"run", b"start", b"--workflow", BAD],
        [b"phases", b"review", BAD],
        [BAD],
        [b"review", b"report", b"latest", b"--output", BAD],
        [b"run", b"start", b"--workflow", b"review", b"--changed-files", BAD],
    ],
)
def test_a_byte_that_is_not_utf8_never_reaches_stdout_raw(git_project: Path, args: list[bytes]) -> None:
    creation.start_run("review", root=git_project)
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", *args],
        env={**os.environ, "PYTHONPATH": str(LIB)},
        cwd=git_project,
        capture_output=True,
        check=False,
    )
    text = done.stdout.decode("utf-8")  # strict: raises on invalid UTF-8
    document = json.loads(text)
    assert isinstance(document, dict)
    done.stderr.decode("utf-8")
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("depth", [33, 900, 15_000])
def test_a_summary_nested_too_deeply_is_refused(git_project: Path, depth: int) -> None:
    run_id = creation.start_run("review", root=git_project)["state"]["run_id"]
    summary = '{"a":' * depth + "1" + "}" * depth
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "run", "end", run_id, "--status", "failed", "--summary", summary],
        env={**os.environ, "PYTHONPATH": str(LIB)},
        cwd=git_project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["code"] in ("INVALID_SUMMARY", "INVALID_JSON")
    assert "Traceback" not in done.stderr
