"""Helpers for the fix-ci tests: runs on the calc project (its test_divide fails: divide multiplies), CI logs
that show that failure, and the CI analyst's answers."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from fake_github import FakeGitHub, Job, Step, WorkflowRun
from helpers_runs import git
from workflows.bugfix_helpers import PYTEST, agents_of, next_action, record

from fixloop.runs import creation, trust
from fixloop.runs.config import COMMAND_FIELDS

LOGS = Path(__file__).resolve().parents[3] / "fixtures" / "logs" / "ci"
# A GitLab job's log (4.6 MB once unpacked): pip's progress bars, 24,001 coloured pytest lines with
# timestamps and section markers, and one failure, tests/test_calc.py::test_divide (assert 18 == 2).
NOISY_LOG = LOGS / "gitlab_pytest_noisy.log.gz"
FAILING = "tests/test_calc.py::test_divide"


PYTEST_FAILURE = [
    "##[group]Run python -m pytest",
    "##[endgroup]",
    "=================================== FAILURES ===================================",
    "_________________________________ test_divide __________________________________",
    "",
    "    def test_divide():",
    ">       assert divide(6, 3) == 2",
    "E       assert 18 == 2",
    "",
    "tests/test_calc.py:5: AssertionError",
    "=========================== short test summary info ============================",
    "FAILED tests/test_calc.py::test_divide - assert 18 == 2",
    "========================= 1 failed, 3 passed in 0.12s ==========================",
    "##[error]Process completed with exit code 1.",
]
PYTEST_LOG = "\n".join(PYTEST_FAILURE)
STAMP = "2024-05-14T09:12:03.1234567Z"
RUFF_FAILURE = [
    "calc.py:1:8: F401 [*] `os` imported but unused",
    "Found 1 error.",
    "##[error]Process completed with exit code 1.",
]
RUNNER_LOST = [
    "Error: The operation was canceled.",
    "##[error]The runner has received a shutdown signal.",
]


def configure(root: Path, **config: Any) -> None:
    """The project's fixloop config (test_command: its pytest, unless given), its commands approved."""
    settings = {"test_command": PYTEST, "use_verifier": False, **config}
    path = root / ".claude" / "fixloop.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({key: value for key, value in settings.items() if value is not None}))
    commands = {step: settings[field] for step, field in COMMAND_FIELDS.items() if settings.get(field)}
    if commands:
        trust.approve(root, commands)


def start(
    root: Path,
    *,
    run: str = "",
    log_file: str | None = None,
    job: str | None = None,
    phase: str | None = None,
    dry_run: bool = False,
    interactive: bool = False,
    **config: Any,
) -> str:
    """Start a fix-ci run of `run` (or `log_file`) with `config`; its run id."""
    configure(root, **config)
    started = creation.start_run(
        "ci-job",
        root=root,
        phase=phase,
        dry_run=dry_run,
        claude_session_id="",
        interactive=interactive,
        inputs={"run": run, "log_file": log_file, "job": job},
    )
    run_id: str = started["state"]["run_id"]
    return run_id


def entry(failure_id: str = "F1", category: str = "test", **fields: Any) -> dict[str, Any]:
    found = {"failure_id": failure_id, "category": category, "confidence": 90, "summary": "divide multiplies"}
    return {**found, **fields}


def analyst(*entries: dict[str, Any]) -> dict[str, Any]:
    """The CI analyst's answer: the given entries, else test_divide as a test failure."""
    return {
        "status": "success",
        "agent": "ci-analyst",
        "failures": list(entries) or [entry(test={"file": "tests/test_calc.py", "name": "test_divide"})],
        "summary": "divide is wrong",
    }


def implementer_fix(*files: str) -> dict[str, Any]:
    changed = list(files or ["calc.py"])
    return {"status": "success", "agent": "implementer", "stage": "fix", "files_modified": changed}


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def failed_run(github: FakeGitHub, root: Path, *jobs: Job, **fields: Any) -> WorkflowRun:
    """A failed run of main at the checkout's HEAD: the given jobs, else a test job whose pytest fails."""
    found = list(jobs) or [
        Job("lint", [Step("Set up job", log="Runner ready"), Step("Ruff", log="All checks passed!")]),
        Job("test", [Step("Set up job", log="Runner ready"), Step("Run pytest", "failure", log=PYTEST_LOG)]),
    ]
    settings = {"head_branch": "main", "head_sha": head(root), **fields}
    return github.repo.add_run(jobs=found, **settings)


def write_log(root: Path, *steps: tuple[str, str, list[str]], name: str = "job.log") -> str:
    """A `gh run view --log-failed` style log file in the project (JOB<TAB>STEP<TAB>TIME line); its path."""
    text = "".join(f"{job}\t{step}\t{STAMP} {line}\n" for job, step, lines in steps for line in lines)
    (root / name).write_text(text)
    return str(root / name)


def pytest_and_ruff_log(root: Path) -> str:
    """F1: calc.py's unused import (ruff), F2: test_divide (pytest)."""
    return write_log(root, ("lint", "Ruff", RUFF_FAILURE), ("test", "Run pytest", PYTEST_FAILURE))


# A linter for the tests: fails while calc.py imports os.
LINT = f"{shlex.quote(sys.executable)} -c \"import sys; sys.exit('import os' in open('calc.py').read())\""


def add_unused_import(root: Path) -> None:
    (root / "calc.py").write_text("import os\n" + (root / "calc.py").read_text())
    git(root, "commit", "-q", "-am", "os")


def through_classify(root: Path, run_id: str, answer: dict[str, Any] | None = None) -> dict[str, Any]:
    """The analyst answers (test_divide as a test failure unless `answer`); the action that follows."""
    assert agents_of(next_action(root, run_id)) == ["ci-analyst"]
    recorded = record(root, run_id, "ci-analyst", answer or analyst())
    assert recorded["valid"], recorded
    return next_action(root, run_id)
