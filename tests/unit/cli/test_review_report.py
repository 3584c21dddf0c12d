"""`fixloop review report`: --fail-on for CI in every format, the HTML page, and --output anywhere."""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_reports import record_usage, save_run, write_source
from helpers_review import make_state, two_rounds
from helpers_runs import LIB

from fixloop.cli import cli
from fixloop.report.render import REPORT_FORMATS

RUN = "abcd1234"


def invoke_text(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def invoke(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args))
    try:
        document = json.loads(result.output)
    except json.JSONDecodeError:
        pytest.fail(f"not JSON (exit {result.exit_code}): {result.output!r} {result.exception!r}")
    return result.exit_code, document


@pytest.fixture
def reviewed(git_project: Path) -> Path:
    """A run whose remaining findings are FL-002 critical, FL-003 low and FL-004 high."""
    write_source(git_project)
    save_run(git_project, two_rounds().state, RUN)
    return git_project


@pytest.mark.parametrize("fmt", REPORT_FORMATS)
@pytest.mark.parametrize(("level", "exit_code"), [("critical", 1), ("high", 1), ("medium", 1), ("low", 1)])
def test_fail_on_exits_1_after_printing_the_report(
    reviewed: Path, fmt: str, level: str, exit_code: int
) -> None:
    code, printed = invoke_text("review", "report", RUN, "--format", fmt, "--fail-on", level)
    assert code == exit_code
    assert printed == invoke_text("review", "report", RUN, "--format", fmt)[1]  # the report, unchanged


@pytest.mark.parametrize("fmt", REPORT_FORMATS)
def test_fail_on_writes_the_report_then_exits_1(reviewed: Path, fmt: str) -> None:
    code, written = invoke(
        "review", "report", RUN, "--format", fmt, "--output", f"out.{fmt}", "--fail-on", "high"
    )
    assert code == 1
    assert written == {
        "status": "written",
        "run_id": RUN,
        "format": fmt,
        "output": str(reviewed / f"out.{fmt}"),
        "fail_on": {
            "level": "high",
            "failed": True,
            "findings": [
                {"id": "FL-002", "severity": "critical", "file": "src/app.py", "line": 33},
                {"id": "FL-004", "severity": "high", "file": "src/app.py", "line": 80},
            ],
        },
    }
    assert (reviewed / f"out.{fmt}").stat().st_size > 0


def test_fail_on_passes_when_nothing_reaches_the_level(git_project: Path) -> None:
    low_only = two_rounds().state
    final = low_only["review"]["rounds"][-1]
    final["issues"] = [item for item in final["issues"] if item["severity"] == "low"]
    save_run(git_project, low_only, RUN)
    save_run(git_project, make_state(), "bbbbbbbb", started_ms=1)
    for run_id, level in ((RUN, "medium"), (RUN, "high"), ("bbbbbbbb", "low")):
        code, written = invoke(
            "review", "report", run_id, "--format", "sarif", "--output", "r.sarif", "--fail-on", level
        )
        assert (code, written["fail_on"]) == (0, {"level": level, "failed": False, "findings": []})
    code, _report = invoke("review", "report", RUN, "--fail-on", "low")
    assert code == 1


def test_html_written_and_printed(reviewed: Path) -> None:
    record_usage(reviewed, RUN, "code-reviewer", "t1", 1000, 200)
    code, written = invoke(
        "review", "report", "latest", "--format", "html", "--output", "reports/review.html"
    )
    assert (code, written["output"]) == (0, str(reviewed / "reports" / "review.html"))
    page = (reviewed / "reports" / "review.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert 'data-round="2" data-series="fixed" data-value="1"' in page
    assert "<td>code-reviewer</td>" in page
    assert "line 80" in page
    code, printed = invoke_text("review", "report", RUN, "--format", "html")
    assert (code, printed) == (0, page)


def test_markdown_and_html_print_the_document_itself(reviewed: Path) -> None:
    """What every final message and README tell users to run prints the report, not JSON around it."""
    for fmt, start in (("markdown", f"# fixloop review report — run {RUN}\n"), ("html", "<!DOCTYPE html>")):
        code, printed = invoke_text("review", "report", RUN, "--format", fmt)
        assert code == 0
        assert printed.startswith(start)
        assert printed.endswith("\n") and not printed.endswith("\n\n")
        code, _written = invoke("review", "report", RUN, "--format", fmt, "--output", f"report.{fmt}")
        assert code == 0
        assert printed == (reviewed / f"report.{fmt}").read_text(encoding="utf-8")
    code, printed = invoke_text("review", "report", RUN, "--format", "markdown")
    assert "## Remaining issues" in printed and '"content"' not in printed
    # the JSON formats stay one JSON document each
    assert invoke("review", "report", RUN, "--format", "sarif")[1]["version"] == "2.1.0"
    assert isinstance(invoke("review", "report", RUN, "--format", "array")[1], list)


def test_the_json_report_names_its_run(reviewed: Path) -> None:
    save_run(reviewed, two_rounds().state, "bbbbbbbb", started_ms=1)  # older: `latest` is still RUN
    code, report = invoke("review", "report", "latest", "--format", "json")
    assert (code, report["run_id"], report["status"]) == (0, RUN, "partial")
    code, report = invoke("review", "report", "bbbbbbbb")
    assert (code, report["run_id"]) == (0, "bbbbbbbb")


def test_output_outside_the_project(reviewed: Path, tmp_path: Path) -> None:
    target = tmp_path / "artifacts" / "fixloop.sarif"
    code, written = invoke("review", "report", RUN, "--format", "sarif", "--output", str(target))
    assert (code, written["output"]) == (0, str(target))
    assert json.loads(target.read_text())["version"] == "2.1.0"
    code, refused = invoke("review", "report", RUN, "--output", str(reviewed / ".git" / "config"))
    assert (code, refused["error"]["code"]) == (2, "INVALID_OUTPUT")


def test_in_a_real_process(reviewed: Path) -> None:
    env = {"PYTHONPATH": str(LIB), "PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(reviewed)}

    def fixloop(*args: str) -> tuple[int, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "fixloop", *args], capture_output=True, text=True, env=env, check=False
        )
        assert done.stderr == ""
        return done.returncode, json.loads(done.stdout)

    code, written = fixloop(
        "review",
        "report",
        "latest",
        "--format",
        "sarif",
        "--output",
        "fixloop.sarif",
        "--fail-on",
        "critical",
    )
    assert (code, written["fail_on"]["failed"]) == (1, True)
    sarif = json.loads((reviewed / "fixloop.sarif").read_text())
    assert len(sarif["runs"][0]["results"]) == 3
    code, refused = fixloop("review", "report", RUN, "--fail-on", "severe")
    assert (code, refused["error"]["code"]) == (2, "USAGE_ERROR")
    assert "severe" in refused["error"]["message"]


def test_tokens_of_a_model_without_a_price_are_named_in_every_report(git_project: Path) -> None:
    state = two_rounds().state
    opus = {"input": 4.0, "output": 20.0, "cache_write": 5.0, "cache_read": 0.4}
    state["config"]["prices"] = {"opus": opus}  # a table that does not price sonnet
    save_run(git_project, state, RUN)
    record_usage(git_project, RUN, "code-reviewer", "t1", 1000, 200)
    note = (
        "Not priced, so not in the cost: claude-sonnet-5-5 (1 call(s), 1200 tokens). Give each a price in "
        "`prices` in .claude/fixloop.json."
    )
    code, report = invoke("review", "report", RUN)
    assert code == 0
    assert report["usage"]["unpriced"] == [{"model": "claude-sonnet-5-5", "calls": 1, "total_tokens": 1200}]
    assert invoke_text("review", "report", RUN, "--format", "markdown")[1].endswith(f"\n\n{note}\n")
    assert html.escape(note) in invoke_text("review", "report", RUN, "--format", "html")[1]
