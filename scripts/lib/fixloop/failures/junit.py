"""JUnit XML reports (pytest --junitxml, Jest/Vitest/Playwright junit reporters, Maven Surefire) -> failures.

Entity expansion (billion laughs) and external entities are ruled out without a third-party parser: the
document is decoded here (byte order mark, else its declared encoding, else UTF-8) and its declaration
dropped, so the parser reads UTF-8 only; a document with a DOCTYPE (where entities are defined) is refused
before the parser sees it.
"""

from __future__ import annotations

import codecs
import re
import xml.etree.ElementTree as ElementTree

from fixloop.failures.model import Counts, Failure, FailureKind, Parsed
from fixloop.failures.textutil import block, first_line, to_int, tolerant

RUNNER = "junit"

_DECLARATIONS = re.compile(r"^(?:\s*<\?xml[^>]*\?>)+")
_XML_INSTRUCTION = re.compile(r"<\?xml", re.IGNORECASE)
_DECLARED_ENCODING = re.compile(r"^\s*<\?xml[^>]*?encoding=[\"']([A-Za-z0-9._-]{1,40})[\"']")
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16's: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_DOCTYPE = re.compile(r"<!DOCTYPE|<!ENTITY", re.IGNORECASE)
_PATH_LIKE = re.compile(r"[/\\]|\.(?:[cm]?[jt]sx?|py|rb|go|rs|php|feature)$")
_RUN_LEVEL = re.compile(r"^(?:failed on (?:setup|teardown)|collection failure)", re.IGNORECASE)


@tolerant(RUNNER)
def parse_junit(document: str | bytes) -> Parsed:
    text = _DECLARATIONS.sub("", _decoded(document))  # without a declaration, the parser reads UTF-8
    if _DOCTYPE.search(text):
        return Parsed(runner=RUNNER, notes=("refused a JUnit document with a DOCTYPE (entity definitions)",))
    if "\x00" in text or _XML_INSTRUCTION.search(text):  # the parser would guess UTF-16, or switch encodings
        return Parsed(
            runner=RUNNER, notes=("not a readable JUnit XML document: its encoding is not declared",)
        )
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        return Parsed(runner=RUNNER, notes=(f"not a readable JUnit XML document: {error}",))
    failures: list[Failure] = []
    tallies = {"cases": 0, "failed": 0, "errors": 0, "skipped": 0}
    _walk(root, root.get("name") if _local(root.tag) == "testsuite" else None, failures, tallies)
    if tallies["cases"] == 0:
        return Parsed(runner=RUNNER, notes=("the JUnit document holds no testcase",))
    counts = Counts(
        passed=tallies["cases"] - tallies["failed"] - tallies["errors"] - tallies["skipped"],
        failed=tallies["failed"],
        skipped=tallies["skipped"],
        errors=tallies["errors"],
    )
    run_error = bool(failures) and all(failure.kind == "error" for failure in failures)
    return Parsed(runner=RUNNER, failures=tuple(failures), counts=counts, run_error=run_error)


def _decoded(document: str | bytes) -> str:
    if isinstance(document, str):
        return document
    for mark, codec in _BYTE_ORDER_MARKS:
        if document.startswith(mark):
            return document.decode(codec, "replace")
    declared = _DECLARED_ENCODING.match(document[:300].decode("ascii", "replace"))
    try:
        return document.decode(declared.group(1) if declared else "utf-8", "replace")
    except LookupError:  # an encoding Python does not know
        return document.decode("utf-8", "replace")


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _walk(
    element: ElementTree.Element, suite: str | None, failures: list[Failure], tallies: dict[str, int]
) -> None:
    for child in element:
        name = _local(child.tag)
        if name == "testsuite":
            _walk(child, child.get("name") or suite, failures, tallies)
        elif name == "testsuites":
            _walk(child, suite, failures, tallies)
        elif name == "testcase":
            tallies["cases"] += 1
            _case(child, suite, failures, tallies)


def _case(
    case: ElementTree.Element, suite: str | None, failures: list[Failure], tallies: dict[str, int]
) -> None:
    outcomes = {_local(child.tag): child for child in case}
    problem = outcomes.get("failure")
    if problem is None:
        problem = outcomes.get("error")
    if problem is None:
        if "skipped" in outcomes:
            tallies["skipped"] += 1
        return
    is_error = _local(problem.tag) == "error"
    tallies["errors" if is_error else "failed"] += 1
    failures.append(_failure(case, problem, is_error, suite))


def _failure(
    case: ElementTree.Element, problem: ElementTree.Element, is_error: bool, suite: str | None
) -> Failure:
    classname = (case.get("classname") or "").strip()
    name = (case.get("name") or "").strip()
    path_like = bool(_PATH_LIKE.search(classname))
    if not classname or classname == name:
        test_id = name or classname or "(unnamed)"
    elif path_like:
        test_id = f"{classname} > {name}"
    else:
        test_id = f"{classname}.{name}"
    text = problem.text or ""
    attribute = (problem.get("message") or "").strip()
    message = first_line(attribute.splitlines()) or first_line(text.splitlines()) or "failed"
    kind: FailureKind = "error" if is_error and _RUN_LEVEL.match(attribute) else "test"
    details = block(text.splitlines()) or attribute
    file = case.get("file") or (classname if path_like else None)
    return Failure(
        RUNNER, test_id, kind, message, file=file, line=to_int(case.get("line")), details=details, suite=suite
    )
