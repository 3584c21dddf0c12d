from __future__ import annotations

import pytest

from fixloop.failures.logclean import CiLine, LineCleaner, clean_ci_line

ESC = "\x1b"


def test_a_github_line_gives_its_job_step_and_message() -> None:
    line = clean_ci_line("test (3.11)\tRun tests\t2024-01-02T03:04:05.1234567Z collected 3 items\n")
    assert line == CiLine("collected 3 items", "test (3.11)", "Run tests")


def test_the_byte_order_mark_before_a_step_s_first_timestamp() -> None:
    line = clean_ci_line(
        "build\tSet up job\t\ufeff2024-01-02T03:04:05.1234567Z Current runner version: '2.317.0'"
    )
    assert line == CiLine("Current runner version: '2.317.0'", "build", "Set up job")


def test_a_cleaner_reuses_the_prefix_of_the_step_it_is_in() -> None:
    cleaner = LineCleaner()
    first = cleaner.clean("lint\tRun ruff\t2024-01-02T03:04:05.1Z one")
    second = cleaner.clean("lint\tRun ruff\t2024-01-02T03:04:06.2Z two\r\n")
    third = cleaner.clean("test\tRun tests\t2024-01-02T03:04:07.3Z three")
    assert [first, second, third] == [
        CiLine("one", "lint", "Run ruff"),
        CiLine("two", "lint", "Run ruff"),
        CiLine("three", "test", "Run tests"),
    ]


def test_tabs_without_a_timestamp_are_text() -> None:
    assert clean_ci_line("a\tb\tc") == CiLine("a\tb\tc")


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (f"{ESC}[31;1mFAILED{ESC}[0m tests/a.py::t", "FAILED tests/a.py::t"),
        (f"{ESC}]8;;https://example.com{ESC}\\link{ESC}]8;;{ESC}\\ here", "link here"),
        (f"{ESC}_bk;t=1715677923000\x07+ npm test", "+ npm test"),
        ("Downloading 10%\rDownloading 55%\rDownloading 100%", "Downloading 100%"),
        (f"progress{ESC}[K\r{ESC}[2K\r", "progress"),
        ("2024-01-02T03:04:05.123Z hello", "hello"),
        ("2024-05-14T09:12:03.431409Z 00O+ partial line", "partial line"),
        ("[2024-05-14T09:12:03.431Z] + make test", "+ make test"),
        ("[09:12:03] Starting 'test'...", "Starting 'test'..."),
        ("2024-01-02 03:04:05,123 INFO started", "INFO started"),
        ("12 passed in 3.1s", "12 passed in 3.1s"),
    ],
)
def test_noise_is_removed(raw: str, text: str) -> None:
    assert clean_ci_line(raw).text == text


def test_github_commands() -> None:
    assert clean_ci_line("##[group]Run pytest -q") == CiLine(None, starts_step="pytest -q")
    assert clean_ci_line("j\ts\t2024-01-02T03:04:05Z ##[group]Run pytest") == CiLine(None, "j", "s")
    assert clean_ci_line("##[endgroup]").text is None
    assert clean_ci_line("::group::Install").text is None
    assert clean_ci_line("##[warning]Node 16 is deprecated").text == "Node 16 is deprecated"
    assert clean_ci_line("##[error]Process completed with exit code 2.") == CiLine(
        "Process completed with exit code 2.", step_failed=True, exit_code=2
    )
    assert clean_ci_line("##[error]tests failed") == CiLine("tests failed", step_failed=True)


def test_gitlab_sections_open_steps() -> None:
    raw = (
        f"section_end:1715677988:step_script\r{ESC}[0Ksection_start:1715677988:after_script\r{ESC}[0K"
        f"{ESC}[0K{ESC}[36;1mRunning after_script{ESC}[0;m{ESC}[0;m"
    )
    assert clean_ci_line(raw) == CiLine("Running after_script", starts_step="after_script")
    closing = clean_ci_line(
        f"section_end:1715677989:cleanup\r{ESC}[0K{ESC}[31;1mERROR: Job failed: exit code 1"
    )
    assert closing == CiLine("ERROR: Job failed: exit code 1", job_failed=True, exit_code=1)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("ERROR: script returned exit code 2", 2),
        ("Finished: FAILURE", None),
        ("Exited with code exit status 1", 1),
        ("\U0001f6a8 Error: The command exited with status 3", 3),
        ('The command "npm test" exited with 1.', 1),
    ],
)
def test_job_failure_lines(raw: str, code: int | None) -> None:
    line = clean_ci_line(raw)
    assert (line.job_failed, line.exit_code) == (True, code)


def test_jenkins_stages_and_buildkite_headers_open_steps() -> None:
    assert clean_ci_line("[Pipeline] { (Unit tests)") == CiLine(None, starts_step="Unit tests")
    assert clean_ci_line("[Pipeline] sh") == CiLine(None)
    assert clean_ci_line("+++ :pytest: Run tests") == CiLine(
        "+++ :pytest: Run tests", starts_step=":pytest: Run tests"
    )
    assert clean_ci_line("--- FAIL: TestX (0.00s)").starts_step is None


def test_overlong_lines_are_cut() -> None:
    line = clean_ci_line("x" * 5000, max_chars=100)
    assert line.text == "x" * 100 + " [line cut]"
