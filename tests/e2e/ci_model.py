"""``/fixloop:fix-ci`` end to end: the CI logs of the backend sample's failing test (tests/e2e/samples/
backend, run by its real pytest), the CI analyst and implementer as the scripted model plays them, and a
session.

The logs are shaped like the real ones: a GitLab job log (timestamps, ANSI colours, section markers, pip's
progress bars), a GitHub Actions ``gh run view --log-failed`` log, and a failed GitHub Actions job whose step
logs the local GitHub server (fake_github) serves to the real ``gh``. The behaviours read their task like a
model would: the analyst classifies each failure it is handed (``F1. TEST_ID (KIND) in ...``); the
implementer Reads and Edits the sample's faulty line with tool calls, then answers stage ``fix``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop_model import Act, Behaviour, Scenario, Turn
from fixloop_session import MakeRunner, Session, StartAPI, command_session
from sample_projects import SAMPLES, make_sample, sample_env
from scripted_api import tool_use

JSON = dict[str, Any]

CI_ANALYST = "ci-analyst"
IMPLEMENTER = "implementer"
BACKEND = SAMPLES["backend"]
FAILING = BACKEND.failing_test  # tests/test_cart.py::test_ten_units_get_the_bulk_discount
PASSING = "tests/test_cart.py::test_order_total_adds_the_lines"  # passes locally, whatever CI says
TEST_FILE = "tests/test_cart.py"
STAMP = "2024-05-14T09:12:03.1234567Z"
ESC = "\x1b"
_HANDED = re.compile(r"^(F\d+)\. (\S+) \((\w+)\) in ", re.MULTILINE)


# --------------------------------------------------------------------------------------------------
# What pytest printed in CI
# --------------------------------------------------------------------------------------------------


def _name(test_id: str) -> str:
    return test_id.split("::", 1)[1]


def pytest_failure(test_id: str = FAILING) -> list[str]:
    """The end of `python -m pytest -v` in CI when ``test_id`` (one of the sample's tests) fails."""
    name = _name(test_id)
    if test_id == FAILING:
        body = [
            "    def test_ten_units_get_the_bulk_discount() -> None:",
            '>       assert line_total(Line("pen", 250, 10)) == 2250',
            "E       AssertionError: assert 2500 == 2250",
            "E        +  where 2500 = line_total(Line(sku='pen', unit_price_cents=250, quantity=10))",
            "",
            f"{TEST_FILE}:13: AssertionError",
        ]
        message = "AssertionError: assert 2500 == 2250"
    else:  # the CI's database fixture was down: the total came back empty
        body = [
            "    def test_order_total_adds_the_lines() -> None:",
            '>       assert order_total([Line("pen", 250, 2), Line("pad", 400, 1)]) == 900',
            "E       AssertionError: assert 0 == 900",
            "",
            f"{TEST_FILE}:17: AssertionError",
        ]
        message = "AssertionError: assert 0 == 900"
    return [
        "=================================== FAILURES ===================================",
        f"{f' {name} ':_^80}",
        "",
        *body,
        "=========================== short test summary info ============================",
        f"FAILED {test_id} - {message}",
        "========================= 1 failed, 2 passed in 0.05s ==========================",
    ]


def pytest_run(test_id: str = FAILING, *, coloured: bool = False) -> list[str]:
    """The whole `python -m pytest -v` output of the sample in CI, ``test_id`` failing."""
    tests = ["test_nine_units_pay_full_price", "test_ten_units_get_the_bulk_discount", PASSING]
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0 -- /usr/local/bin/python",
        "rootdir: /builds/shop/pricing",
        "configfile: pyproject.toml",
        "collecting ... collected 3 items",
        "",
    ]
    for percent, test in zip((33, 66, 100), tests, strict=True):
        test = test if "::" in test else f"{TEST_FILE}::{test}"
        word = "FAILED" if test == test_id else "PASSED"
        colour = "31" if word == "FAILED" else "32"
        shown = f"{ESC}[{colour}m{word}{ESC}[0m" if coloured else word
        lines.append(f"{test} {shown}".ljust(72 + (len(shown) - len(word))) + f" [{percent:3d}%]")
    return [*lines, "", *pytest_failure(test_id)]


def pip_noise(count: int) -> list[str]:
    """``count`` lines of pip's download progress, as a CI console keeps them (bar rewrites and colours)."""
    return [
        f"  Downloading package_{n % 97}-1.{n % 13}.0-py3-none-any.whl (1{n % 10}4 kB)\r"
        f"     {ESC}[38;5;197m━━━━━━━━━━━━━━━━{ESC}[0m{ESC}[38;5;237m╺━━━━━━━{ESC}[0m {n % 100}/1{n % 10}4 kB"
        for n in range(count)
    ]


def gitlab_log(test_id: str = FAILING, *, noise: int = 2000) -> str:
    """A GitLab job's log: timestamped lines (`2024-...Z 00O `), section markers, colours, pip's progress,
    then the coloured pytest run and GitLab's closing failure line."""
    sections = [
        ("prepare_executor", [f"{ESC}[1mUsing Docker executor with image python:3.12-slim ...{ESC}[0;m"]),
        ("get_sources", [f"{ESC}[32;1mFetching changes with git depth set to 20...{ESC}[0;m"]),
        ("step_script", [f"{ESC}[32;1m$ pip install -e . pytest{ESC}[0;m", *pip_noise(noise)]),
    ]
    out: list[str] = []
    started = 1715677923
    for number, (name, body) in enumerate(sections):
        out.append(f"{ESC}[0Ksection_start:{started + number}:{name}\r{ESC}[0K{ESC}[36;1m{name}{ESC}[0;m")
        out += body
        if name != "step_script":
            out.append(f"{ESC}[0Ksection_end:{started + number}:{name}\r{ESC}[0K")
    out += [f"{ESC}[32;1m$ python -m pytest -v{ESC}[0;m", *pytest_run(test_id, coloured=True)]
    out += [
        f"{ESC}[0Ksection_end:{started + 2}:step_script\r{ESC}[0K",
        f"{ESC}[31;1mERROR: Job failed: exit code 1{ESC}[0;m",
    ]
    stamped = [
        f"2024-05-14T09:12:{3 + n // 1000:02d}.{n % 1000:03d}300Z 00O {line}" for n, line in enumerate(out)
    ]
    return "\n".join(stamped) + "\n"


def log_failed(job: str, step: str, lines: Sequence[str]) -> str:
    """A `gh run view --log-failed` log of one failed step: `JOB<TAB>STEP<TAB>TIMESTAMP line`."""
    return "".join(
        f"{job}\t{step}\t{STAMP} {line}\n"
        for line in [*lines, "##[error]Process completed with exit code 1."]
    )


def big_step_log(noise: int) -> str:
    """A failed `Run pytest` step's output (as the server keeps it, without timestamps): pip's progress,
    ``noise`` lines of it, then the pytest run; several megabytes for a few ten thousand lines."""
    lines = [
        f"{ESC}[36;1mpip install -e . pytest{ESC}[0m",
        *pip_noise(noise),
        *pytest_run(FAILING, coloured=True),
    ]
    return "\n".join([*lines, "##[error]Process completed with exit code 1."])


# --------------------------------------------------------------------------------------------------
# The agents
# --------------------------------------------------------------------------------------------------


def handed(task: str) -> list[tuple[str, str, str]]:
    """(failure id, test id, kind) of each failure the analyst's task lists."""
    return [(match[1], match[2], match[3]) for match in _HANDED.finditer(task)]


@dataclass
class Seen:
    """What the scripted agents were handed, for the test to check."""

    analyst_tasks: list[str]
    implementer_tasks: list[str]


def ci_analyst(seen: Seen, *, category: str = "test", confidence: int = 92) -> Behaviour:
    """Classifies every failure handed as ``category``; a test failure is named by its CI test id."""

    def behave(turn: Turn) -> Act:
        seen.analyst_tasks.append(turn.task)
        failures = []
        for failure_id, test_id, _kind in handed(turn.task):
            entry: JSON = {
                "failure_id": failure_id,
                "category": category,
                "confidence": confidence,
                "summary": f"{test_id} fails in CI",
            }
            if category == "test" and "::" in test_id:
                file, name = test_id.split("::", 1)
                entry["test"] = {"file": file, "name": name}
            if test_id == FAILING:
                entry |= {"file": BACKEND.fix.file, "cause": BACKEND.bug, "fix": BACKEND.fix.new.strip()}
            failures.append(entry)
        return {"status": "success", "agent": CI_ANALYST, "failures": failures, "summary": "one test fails"}

    return behave


def ci_implementer(seen: Seen, project: Path) -> Behaviour:
    """Reads the sample's faulty file, Edits its one-line bug, then answers stage fix."""
    fix = BACKEND.fix
    path = str(project / fix.file)

    def behave(turn: Turn) -> Act:
        made = [use.name for use in turn.tool_uses]
        if not made:
            seen.implementer_tasks.append(turn.task)
            return [tool_use("Read", {"file_path": path})]
        if made == ["Read"]:
            return [tool_use("Edit", {"file_path": path, "old_string": fix.old, "new_string": fix.new})]
        return {
            "status": "success",
            "agent": IMPLEMENTER,
            "stage": "fix",
            "files_modified": [fix.file],
            "summary": f"{fix.file}: the bulk discount starts at BULK_QUANTITY",
        }

    return behave


def ci_scenario(project: Path, *, category: str = "test") -> tuple[Scenario, Seen]:
    seen = Seen([], [])
    agents = {CI_ANALYST: ci_analyst(seen, category=category), IMPLEMENTER: ci_implementer(seen, project)}
    return Scenario(agents=agents), seen


# --------------------------------------------------------------------------------------------------
# A session
# --------------------------------------------------------------------------------------------------


def backend_project(where: Path) -> Path:
    """A fresh git copy of the backend sample (branch main, one commit)."""
    return make_sample("backend", where)


def fix_ci_session(
    start_api: StartAPI,
    make_runner: MakeRunner,
    plugin_data: Path,
    project: Path,
    arguments: str,
    *,
    category: str = "test",
    env: Mapping[str, str] | None = None,
    timeout: float = 600.0,
) -> tuple[Session, Seen]:
    """``/fixloop:fix-ci ARGUMENTS`` in the real CLI on ``project`` (the backend sample), its test command
    approved, the repo's .venv first on PATH (its pytest), ``env`` added to the CLI's environment."""
    scenario, seen = ci_scenario(project, category=category)
    session = command_session(
        start_api,
        make_runner,
        plugin_data,
        scenario,
        command="fix-ci",
        arguments=arguments,
        project=project,
        env={"PATH": sample_env()["PATH"], **(env or {})},
        timeout=timeout,
    )
    return session, seen
