"""Checked-in CI logs of several megabytes, shaped like the real ones, reduced to their exact failures.

- ci/gitlab_pytest_noisy.log.gz: a GitLab job's log (4.6 MB once unpacked, 26,787 lines): GitLab's
  timestamps (`2024-...Z 00O `), section markers, colours, pip's progress bars, 24,001 coloured pytest lines,
  one failing test, and GitLab's closing `ERROR: Job failed: exit code 1`.
- ci/github_node_log_failed.log.gz: `gh run view --log-failed` of a Node project's run (4.9 MB, 26,789
  lines): three failed jobs, each line `JOB<TAB>STEP<TAB>TIMESTAMP`, npm's coloured fetch lines and progress
  rewrites, then tsc (build), ESLint's stylish output (lint) and Vitest's coloured output (test), the outputs
  of compiler/tsc.txt, compiler/eslint_stylish.txt and vitest/color.txt.
"""

from __future__ import annotations

import gzip

from failures.logfixtures import LOGS

from fixloop.failures.cilog import Reduced, reduce_log_file, reduce_log_text

NOISY_GITLAB = LOGS / "ci" / "gitlab_pytest_noisy.log.gz"
NODE_GITHUB = LOGS / "ci" / "github_node_log_failed.log.gz"
NOISE = ("\x1b", "\r", "2024-05-14T", "2024-06-02T", "section_start", "section_end", "##[", "npm http")


def rows(reduced: Reduced) -> list[tuple[object, ...]]:
    return [
        (
            r.job,
            r.step,
            r.failure.runner,
            r.failure.test_id,
            r.failure.kind,
            r.failure.file,
            r.failure.line,
            r.lines_kept,
            r.lines_dropped,
        )
        for r in reduced.failures
    ]


def returned_lines(reduced: Reduced) -> list[str]:
    found = [r.failure.message for r in reduced.failures]
    found += [line for r in reduced.failures for line in r.failure.details.split("\n")]
    return found + [line for step in reduced.steps for line in step.tail]


def unpacked_size(path: object) -> int:
    with gzip.open(str(path), "rb") as stream:
        return len(stream.read())


def test_a_noisy_gitlab_job_log_reduces_to_its_one_failing_test() -> None:
    assert unpacked_size(NOISY_GITLAB) > 4_000_000
    reduced = reduce_log_file(NOISY_GITLAB)
    assert rows(reduced) == [
        (
            None,
            "step_script",
            "pytest",
            "tests/test_calc.py::test_divide",
            "test",
            "tests/test_calc.py",
            5,
            7,
            0,
        )
    ]
    failure = reduced.failures[0].failure
    assert failure.message == "assert 18 == 2"
    assert failure.details == (
        "    def test_divide():\n"
        ">       assert divide(6, 3) == 2\n"
        "E       assert 18 == 2\n"
        "E        +  where 18 = divide(6, 3)\n"
        "\n"
        "tests/test_calc.py:5: AssertionError"
    )
    assert [(s.job, s.step, s.exit_code, s.runner, s.failures, s.tail) for s in reduced.steps] == [
        (None, "step_script", None, "pytest", 1, ())
    ]
    assert (reduced.lines_read, reduced.lines_kept, reduced.failures_dropped) == (26787, 7, 0)
    assert reduced.job_failed is True
    assert reduced.notes == (
        "the job failed (exit code 1); no step is marked as failed, these failures were found in its steps",
    )
    assert not [line for line in returned_lines(reduced) if any(mark in line for mark in NOISE)]


def test_a_github_log_of_three_failed_jobs_reduces_to_each_jobs_failures() -> None:
    assert unpacked_size(NODE_GITHUB) > 4_000_000
    reduced = reduce_log_file(NODE_GITHUB)
    build, lint, test = "build", "lint", "test (20.x)"
    tsc, eslint, vitest = "Run npm ci && npx tsc --noEmit", "Run npx eslint .", "Run npm ci && npx vitest run"
    orders = "/home/runner/work/shop/shop/src/orders.js"
    assert rows(reduced) == [
        (build, tsc, "diagnostics", "src/price.ts:4:9 TS2322", "type", "src/price.ts", 4, 2, 0),
        (build, tsc, "diagnostics", "src/price.ts:5:19 TS2551", "type", "src/price.ts", 5, 2, 0),
        (build, tsc, "diagnostics", "src/price.ts:9:3 TS2741", "type", "src/price.ts", 9, 2, 0),
        (lint, eslint, "diagnostics", f"{orders}:1:7 no-unused-vars", "lint", orders, 1, 2, 0),
        (lint, eslint, "diagnostics", f"{orders}:5:5 no-undef", "lint", orders, 5, 2, 0),
        (lint, eslint, "diagnostics", f"{orders}:5:5 no-console", "lint", orders, 5, 2, 0),
        (lint, eslint, "diagnostics", f"{orders}:7:10 no-undef", "lint", orders, 7, 2, 0),
        (test, vitest, "vitest", "vt/broken.test.js", "error", "vt/broken.test.js", 2, 8, 0),
        (
            test,
            vitest,
            "vitest",
            "vt/cart.test.js > cart > total > is zero for an empty cart",
            "test",
            "vt/cart.test.js",
            10,
            16,
            0,
        ),
        (
            test,
            vitest,
            "vitest",
            "vt/cart.test.js > cart > applies a coupon",
            "test",
            "vt/cart.test.js",
            14,
            10,
            0,
        ),
        (
            test,
            vitest,
            "vitest",
            "vt/cart.test.js > cart > keeps the line items",
            "test",
            "vt/cart.test.js",
            17,
            22,
            0,
        ),
    ]
    assert [r.failure.message for r in reduced.failures] == [
        "error TS2322: Type 'number' is not assignable to type 'string'.",
        "error TS2551: Property 'curency' does not exist on type 'Price'. Did you mean 'currency'?",
        "error TS2741: Property 'currency' is missing in type '{ amount: number; }' but required in type "
        "'Price'.",
        "'fs' is assigned a value but never used [no-unused-vars]",
        "'console' is not defined [no-undef]",
        "Unexpected console statement [no-console]",
        "'ordrs' is not defined [no-undef]",
        "Error: Cannot find module '../src/missing.js' imported from "
        "/home/runner/work/shop/shop/vt/broken.test.js",
        "AssertionError: expected +0 to be 1 // Object.is equality",
        'TypeError: coupon has no code: {"off":3}',
        "AssertionError: expected { items: [ 1, 2 ], currency: 'EUR' } to deeply equal "
        "{ items: [ 1, 2, 3 ], currency: 'EUR' }",
    ]
    assert [(s.job, s.step, s.exit_code, s.runner, s.failures, len(s.tail)) for s in reduced.steps] == [
        (build, tsc, 2, "diagnostics", 3, 0),
        (lint, eslint, 1, "diagnostics", 4, 0),
        (test, vitest, 1, "vitest", 4, 0),
    ]
    assert (reduced.lines_read, reduced.lines_kept, reduced.failures_dropped) == (26789, 70, 0)
    assert reduced.notes == ()
    assert not [line for line in returned_lines(reduced) if any(mark in line for mark in NOISE)]


def test_a_runners_closing_failure_line_is_not_read_as_the_steps_own_error() -> None:
    """GitLab's `ERROR: Job failed` (Jenkins' `ERROR: script returned exit code`) right after pytest's
    output, in the same section: pytest's own session errors start with `ERROR: ` too."""
    pytest_output = [
        "=================================== FAILURES ===================================",
        "_________________________________ test_divide __________________________________",
        "    def test_divide():",
        ">       assert divide(6, 3) == 2",
        "E       assert 18 == 2",
        "tests/test_calc.py:5: AssertionError",
        "=========================== short test summary info ============================",
        "FAILED tests/test_calc.py::test_divide - assert 18 == 2",
        "========================= 1 failed, 3 passed in 0.12s ==========================",
    ]
    for closing in ("ERROR: Job failed: exit code 1", "ERROR: script returned exit code 1"):
        text = "section_start:1715677923:step_script\r\n" + "\n".join([*pytest_output, closing]) + "\n"
        reduced = reduce_log_text(text)
        assert [(r.step, r.failure.test_id, r.failure.kind) for r in reduced.failures] == [
            ("step_script", "tests/test_calc.py::test_divide", "test")
        ]
        assert reduced.job_failed is True
        assert reduced.notes[0].startswith("the job failed (exit code 1)")
