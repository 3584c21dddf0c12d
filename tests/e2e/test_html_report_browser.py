"""The HTML review report in a real headless Chromium: it renders without a console error or a request
to anywhere, its chart shows the run's figures, its script works under its own Content-Security-Policy,
and hostile text from an agent stays text.

Chromium missing: the tests are skipped on a developer machine and fail in CI (CI=true).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headless_chromium import HeadlessChromium, browser_missing, headless_chromium
from helpers_reports import save_run, write_source
from helpers_review import two_rounds
from helpers_runs import LIB, git

RUN = "abcd1234"
HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> & "quotes"'


@pytest.fixture(scope="module")
def browser() -> Iterator[HeadlessChromium]:
    missing = browser_missing()
    if missing is not None:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off"):
            pytest.fail(f"needs {missing}")
        pytest.skip(f"needs {missing}")
    with headless_chromium() as chromium:
        yield chromium


def project_with_run(root: Path, state: dict[str, Any]) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_source(root)
    save_run(root, state, RUN)
    return root


def fixloop(root: Path, *args: str) -> tuple[int, Any]:
    env = {
        "PYTHONPATH": str(LIB),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "CLAUDE_PROJECT_DIR": str(root),
    }
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", *args], capture_output=True, text=True, env=env, check=False
    )
    assert done.stderr == ""
    return done.returncode, json.loads(done.stdout)


def html_page(root: Path) -> Path:
    code, written = fixloop(root, "review", "report", "latest", "--format", "html", "--output", "report.html")
    assert code == 0, written
    return Path(written["output"])


def show(browser: HeadlessChromium, page: Path) -> int:
    """Open `page` in a fresh document; the index of its first event in browser.events."""
    browser.open("about:blank")
    start = len(browser.events)
    browser.open(page.as_uri())
    return start


def requested_since(browser: HeadlessChromium, start: int) -> list[str]:
    events, browser.events = browser.events, browser.events[start:]
    try:
        return browser.requested_urls()
    finally:
        browser.events = events


def problems_since(browser: HeadlessChromium, start: int) -> list[str]:
    events, browser.events = browser.events, browser.events[start:]
    try:
        return browser.problems()
    finally:
        browser.events = events


def test_the_page_renders_and_its_chart_shows_the_run(browser: HeadlessChromium, tmp_path: Path) -> None:
    root = project_with_run(tmp_path / "project", two_rounds().state)
    page = html_page(root)
    start = show(browser, page)

    assert problems_since(browser, start) == []
    assert requested_since(browser, start) == [page.as_uri()]  # nothing but the page itself
    assert browser.evaluate("document.title") == f"fixloop review report — run {RUN}"

    # the chart's figures, read from the rendered DOM, are the report's
    code, report = fixloop(root, "review", "report", RUN, "--format", "json")
    assert code == 0
    expected = {
        (str(item["iteration"]), "found"): item["issues_found"] for item in report["review_iterations"]
    }
    for item in report["review_iterations"]:
        expected[(str(item["iteration"]), "fixed")] = len(item["resolved_issues"])
        expected[(str(item["iteration"]), "introduced")] = len(item["introduced_issues"])
    labels = browser.evaluate(
        "Array.from(document.querySelectorAll('svg.chart text.bar-label')).map("
        "t => [t.dataset.round, t.dataset.series, t.textContent])"
    )
    assert {(r, s): int(text) for r, s, text in labels} == expected
    bars = browser.evaluate(
        "Array.from(document.querySelectorAll('svg.chart rect.bar')).map(b => [b.dataset.round, "
        "b.dataset.series, Number(b.dataset.value), b.getBoundingClientRect().height, "
        "getComputedStyle(b).fill])"
    )
    assert {(r, s): value for r, s, value, _h, _fill in bars} == expected
    per_issue = [height / value for _r, _s, value, height, _fill in bars if value]
    assert max(per_issue) - min(per_issue) < 0.5  # bar heights are proportional to the figures
    assert all(height == 0 for _r, _s, value, height, _fill in bars if not value)
    assert {series: fill for _r, series, _v, _h, fill in bars} == {
        "found": "rgb(87, 96, 106)",
        "fixed": "rgb(26, 127, 55)",
        "introduced": "rgb(207, 34, 46)",
    }  # the inline style sheet applied: its hash is in the page's policy
    rows = browser.evaluate(
        "Array.from(document.querySelectorAll('table.numbers tbody tr')).map(r => r.innerText)"
    )
    assert rows == ["Round 1\t3\t0\t0", "Round 2\t3\t1\t1"]

    # the findings, with their code, and the severity filter (the page's own script) working
    findings = browser.evaluate(
        "Array.from(document.querySelectorAll('article.finding')).map(a => [a.dataset.id, "
        "a.querySelector('tr.flagged td:last-child').textContent])"
    )
    assert findings == [["FL-002", "line 33"], ["FL-004", "line 80"], ["FL-003", "line 50"]]
    visible = (
        "Array.from(document.querySelectorAll('article.finding'))"
        ".filter(a => a.offsetParent).map(a => a.dataset.id)"
    )
    assert browser.evaluate(visible) == ["FL-002", "FL-004", "FL-003"]
    browser.evaluate("document.querySelector('input[data-severity=low]').click()")
    assert browser.evaluate(visible) == ["FL-002", "FL-004"]
    assert problems_since(browser, start) == []


def test_hostile_agent_text_does_not_run(browser: HeadlessChromium, tmp_path: Path) -> None:
    def swap(value: Any) -> Any:
        if value in ("Broad except hides errors", "Fix: Broad except hides errors", "Clear names"):
            return HOSTILE
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        if isinstance(value, list):
            return [swap(item) for item in value]
        return value

    root = project_with_run(tmp_path / "project", swap(copy.deepcopy(two_rounds().state)))
    (root / "src" / "app.py").write_text(
        "".join(f"line {n}\n" for n in range(1, 80)) + "</table><script>window.pwned=3</script>\n"
    )
    start = show(browser, html_page(root))

    assert browser.evaluate("typeof window.pwned") == "undefined"
    assert problems_since(browser, start) == []
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.evaluate("document.scripts.length") == 1
    description = browser.evaluate(
        "document.querySelector('article[data-id=\"FL-004\"] .description').textContent"
    )
    assert description == HOSTILE
    code_line = browser.evaluate(
        "document.querySelector('article[data-id=\"FL-004\"] tr.flagged td:last-child').textContent"
    )
    assert code_line == "</table><script>window.pwned=3</script>"


def test_the_harness_sees_a_script_that_runs(browser: HeadlessChromium, tmp_path: Path) -> None:
    """The checks above would catch an injection: an unescaped page trips both of them."""
    unsafe = tmp_path / "unsafe.html"
    unsafe.write_text(f"<!DOCTYPE html><p>{HOSTILE}</p><script>console.error('seen')</script>")
    start = show(browser, unsafe)
    assert browser.evaluate("window.pwned") in (1, 2)
    assert "console: seen" in problems_since(browser, start)
