"""Real runs of real runners (tests/fixtures/runners/capture.py): the text each runner printed, the failing
tests its own machine-readable output of the same failures names, and how well a parser agrees with it.

A failing test is a key: the parser's test_id (prove: `file > name`; pytest: the node id without a
subtest's description, as JUnit names the test once per failed subtest). Keys are compared as multisets:
a test the runner reports twice must be found twice.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from failures.logfixtures import LOGS

from fixloop.failures import Failure, parse

CAPTURE_DIR = "/tmp/fixloop-capture/"  # where capture.py ran each project
_PYTEST_SUBTEST = re.compile(r" (?:\[.*?\] ?)?(?:\(.*\))?$")


def _unittest(path: Path) -> list[str]:
    ids = json.loads(path.read_text(encoding="utf-8"))
    return [*ids["failures"], *ids["errors"], *ids["unexpected_successes"]]


def _tape(path: Path) -> list[str]:
    rows = json.loads(path.read_text(encoding="utf-8"))["failing"]
    return [f"{row['test']} > {row['assertion']}" for row in rows]


def _node_tap(path: Path) -> list[str]:
    """node-tap's JSON reporter: every failing case, and a failing suite none of whose parts failed."""
    found: list[str] = []

    def walk(node: dict[str, Any]) -> bool:
        failed_inside = False
        for case in node.get("cases") or []:
            if case.get("ok") is False and not case.get("todo") and not case.get("skip"):
                found.append(case["fullname"])
                failed_inside = True
        for suite in node.get("suites") or []:
            inner = walk(suite)
            if suite.get("ok") is False and not inner:
                found.append(suite["fullname"])
            failed_inside = failed_inside or inner or suite.get("ok") is False
        return failed_inside

    walk(json.loads(path.read_text(encoding="utf-8")))
    return found


def _node_test_junit(path: Path) -> list[str]:
    """Node's JUnit reporter: `suite > test` per failed test case (a test file that did not load is a test
    case named after the file)."""
    found: list[str] = []

    def walk(element: ElementTree.Element, names: tuple[str, ...]) -> None:
        for child in element:
            if child.tag == "testsuite":
                walk(child, (*names, child.get("name") or ""))
            elif child.tag == "testcase" and any(part.tag in ("failure", "error") for part in child):
                found.append(" > ".join((*names, child.get("name") or "")))

    walk(ElementTree.parse(path).getroot(), ())
    return found


def _prove(path: Path) -> list[str]:
    found: list[str] = []
    for entry in json.loads(path.read_text(encoding="utf-8"))["files"]:
        failed = entry["failed"]
        found += [f"{entry['file']} > {test['name'] or 'test ' + str(test['number'])}" for test in failed]
        if not failed and entry["problems"]:
            found.append(f"{entry['file']} > {entry['file']}")
    return found


def _pytest_junit(path: Path) -> list[str]:
    """pytest's JUnit XML (junit_family=xunit1, which gives each test case its file): a node id per
    failure or error element."""
    found: list[str] = []
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        file, classname, name = case.get("file") or "", case.get("classname") or "", case.get("name") or ""
        module = file.removesuffix(".py").replace("/", ".")
        if not classname:
            node = file
        else:
            inside = classname.removeprefix(module).lstrip(".")
            node = "::".join(part for part in (file, *inside.split("."), name) if part)
        found += [node for child in case if child.tag in ("failure", "error")]
    return found


def _jest_like(path: Path) -> list[str]:
    """Jest's --json and Vitest's json reporter: `file > describe > test` per failed test, the file alone
    for a test file that failed to run."""
    found: list[str] = []
    for result in json.loads(path.read_text(encoding="utf-8"))["testResults"]:
        file = re.sub(r"^" + re.escape(CAPTURE_DIR) + r"[^/]+/", "", result["name"])
        failed = [test for test in result["assertionResults"] if test["status"] == "failed"]
        found += [" > ".join([file, *test["ancestorTitles"], test["title"]]) for test in failed]
        if result["status"] == "failed" and not result["assertionResults"]:
            found.append(file)
    return found


def _cargo_json(path: Path) -> list[str]:
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        event["name"] for event in events if event.get("type") == "test" and event.get("event") == "failed"
    ]


def _go_json(path: Path) -> list[str]:
    """`go test -json`: `package > test` per failed test none of whose subtests failed (a parent fails with
    its failing subtest and adds nothing to fix)."""
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    failed = [
        (event["Package"], event["Test"])
        for event in events
        if event.get("Action") == "fail" and event.get("Test")
    ]
    parents = {  # every prefix: a subtest's own name may hold a slash (go-cmp's `Project3/Inequal`)
        (package, "/".join(parts[:depth]))
        for package, name in failed
        for parts in [name.split("/")]
        for depth in range(1, len(parts))
    }
    return [f"{package} > {name}" for package, name in failed if (package, name) not in parents]


def _plain(failure: Failure) -> str:
    return failure.test_id


def _in_file(failure: Failure) -> str:
    return f"{failure.suite} > {failure.test_id}"


def _pytest_node(failure: Failure) -> str:
    return _PYTEST_SUBTEST.sub("", failure.test_id) if "::" in failure.test_id else failure.test_id


@dataclass(frozen=True)
class RealRun:
    name: str  # what the table calls it
    runner: str  # the parser detection must choose
    output: str  # the text, under tests/fixtures/logs
    reference: str  # the runner's machine-readable account of the same failures
    read: Callable[[Path], list[str]]
    key: Callable[[Failure], str] = _plain


REAL_RUNS: tuple[RealRun, ...] = (
    *(
        RealRun(f"unittest {tag} {mode}", "unittest", f"unittest/{tag}_{mode}.txt",
                f"unittest/{tag}_{mode}.ids.json", _unittest)
        for tag in ("py310", "py312")
        for mode in ("quiet", "verbose")
    ),
    RealRun("TAP (tape)", "tap", "tap/tape.txt", "tap/tape.ids.json", _tape),
    RealRun("TAP (node-tap)", "tap", "tap/node_tap.txt", "tap/node_tap.json", _node_tap),
    RealRun("TAP (node --test)", "tap", "tap/node_test.txt", "tap/node_test.junit.xml", _node_test_junit),
    RealRun("prove", "prove", "prove/quiet.txt", "prove/prove.ids.json", _prove, _in_file),
    RealRun("prove -v", "prove", "prove/verbose.txt", "prove/prove.ids.json", _prove, _in_file),
    RealRun("pytest", "pytest", "pytest/real.txt", "pytest/real.junit.xml", _pytest_junit, _pytest_node),
    RealRun("Jest", "jest", "jest/real.txt", "jest/real.json", _jest_like),
    RealRun("Vitest", "vitest", "vitest/real.txt", "vitest/real.json", _jest_like),
    RealRun("cargo test", "cargo", "cargo/real.txt", "cargo/real.json", _cargo_json),
    RealRun("go test", "go", "go/real.txt", "go/real.json", _go_json, _in_file),
    RealRun("go test -v", "go", "go/real_verbose.txt", "go/real.json", _go_json, _in_file),
    RealRun("go test -json", "go", "go/real.json", "go/real.json", _go_json, _in_file),
)  # fmt: skip


REFERENCES = frozenset(LOGS / run.reference for run in REAL_RUNS)


@dataclass(frozen=True)
class Agreement:
    detected: str | None
    found: Counter[str]
    expected: Counter[str]

    @property
    def precision(self) -> float:
        total = sum(self.found.values())
        return sum((self.found & self.expected).values()) / total if total else 1.0

    @property
    def recall(self) -> float:
        total = sum(self.expected.values())
        return sum((self.found & self.expected).values()) / total if total else 1.0


def agreement(run: RealRun) -> Agreement:
    parsed = parse((LOGS / run.output).read_text(encoding="utf-8"))
    found = Counter(run.key(failure) for failure in parsed.failures)
    return Agreement(parsed.runner, found, Counter(run.read(LOGS / run.reference)))
