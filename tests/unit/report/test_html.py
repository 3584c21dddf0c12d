"""The HTML report: a self-contained page whose every piece of agent or repository text is escaped."""

from __future__ import annotations

import base64
import copy
import hashlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from helpers_reports import write_source
from helpers_review import make_state, two_rounds

from fixloop.contracts.coordinator import DEFAULT_PRICES
from fixloop.report.html import html_report
from fixloop.runs.usage import summarize

HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> & "quotes"'


class Page(HTMLParser):
    """Every element (tag, attributes) and the text inside each element, for assertions."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.texts: dict[str, list[str]] = {}  # the class of the innermost element with one -> its texts
        self._stack: list[tuple[str, str | None]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag not in ("meta", "input", "rect", "line", "br"):
            self._stack.append((tag, dict(attrs).get("class")))

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        for _tag, css in reversed(self._stack):
            if css:
                self.texts.setdefault(css, []).append(data)
                break

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]


def with_usage(state: dict[str, Any]) -> dict[str, Any]:
    usage = {
        "input_tokens": 1200,
        "output_tokens": 300,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    records = [
        {"kind": "result", "agent": agent, "usage": usage, "total_tokens": 1500, "model": "claude-sonnet-5"}
        for agent in ("code-reviewer", "code-reviewer", "review-fixer")
    ]
    prices = {name: price.model_dump() for name, price in DEFAULT_PRICES.items()}
    return {**state, "usage": summarize(records, [], prices)}


def hostile_state() -> dict[str, Any]:
    """Two rounds where the broad-except finding's description, suggestion and agent text are hostile."""

    def swap(value: Any) -> Any:
        if value in ("Broad except hides errors", "Fix: Broad except hides errors", "Clear names"):
            return HOSTILE
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        if isinstance(value, list):
            return [swap(item) for item in value]
        return value

    state: dict[str, Any] = swap(copy.deepcopy(two_rounds().state))
    return state


def test_sections_chart_findings_and_tokens(git_project: Path) -> None:
    write_source(git_project)
    html = html_report(with_usage(two_rounds().state), git_project)
    page = Page(html)
    assert html.startswith("<!DOCTYPE html>\n")
    assert [attrs["id"] for attrs in page.tags("section")] == [
        "summary",
        "rounds",
        "findings",
        "fixed",
        "files",
        "observations",
        "coverage",
        "usage",
    ]
    assert "".join(page.texts["status"]) == "partial"
    assert "".join(page.texts["remaining"]) == "3"
    bars = {
        (attrs["data-round"], attrs["data-series"]): attrs["data-value"]
        for attrs in page.tags("rect")
        if "data-round" in attrs
    }
    assert bars == {
        ("1", "found"): "3",
        ("1", "fixed"): "0",
        ("1", "introduced"): "0",
        ("2", "found"): "3",
        ("2", "fixed"): "1",
        ("2", "introduced"): "1",
    }
    findings = page.tags("article")
    assert [(item["data-id"], item["data-severity"]) for item in findings] == [
        ("FL-002", "critical"),
        ("FL-004", "high"),
        ("FL-003", "low"),
    ]  # the worst first
    flagged = [attrs for attrs in page.tags("tr") if attrs.get("class") == "flagged"]
    assert len(flagged) == 5  # FL-002 spans 33-35, FL-003 and FL-004 one line each
    assert "line 33" in html and "line 30" in html and "line 29" not in html
    assert [attrs["data-severity"] for attrs in page.tags("input")] == ["critical", "high", "low"]
    assert "<td>code-reviewer</td>" in html
    assert '<td class="num">2</td><td class="num">2400</td><td class="num">600</td>' in html


def test_self_contained_with_a_policy_that_allows_only_its_own_style_and_script(git_project: Path) -> None:
    page = Page(html_report(two_rounds().state, git_project))
    (policy,) = [attrs for attrs in page.tags("meta") if attrs.get("http-equiv") == "Content-Security-Policy"]
    html = html_report(two_rounds().state, git_project)
    script = html.split("<script>", 1)[1].split("</script>", 1)[0]
    style = html.split("<style>", 1)[1].split("</style>", 1)[0]

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert policy["content"] == (
        f"default-src 'none'; style-src 'sha256-{digest(style)}'; script-src 'sha256-{digest(script)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    for tag, attrs in page.elements:
        assert tag not in ("link", "img", "iframe", "object", "embed"), tag
        assert not {"src", "href"} & set(attrs), (tag, attrs)


def test_hostile_text_is_text(git_project: Path) -> None:
    write_source(git_project)
    html = html_report(hostile_state(), git_project)
    page = Page(html)
    assert len(page.tags("script")) == 1
    assert page.tags("img") == []
    assert not any(name.startswith("on") for _tag, attrs in page.elements for name in attrs)
    assert "".join(page.texts["description"]).count(HOSTILE) == 1
    assert HOSTILE in "".join(page.texts["suggestion"])
    assert (
        "&lt;script&gt;window.pwned=1&lt;/script&gt;&lt;img src=x onerror=&quot;window.pwned=2&quot;&gt;"
        in html
    )


def test_hostile_file_names_and_code_are_text(git_project: Path) -> None:
    name = 'src/"><svg onload=alert(1)>.py'
    path = git_project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("ok = 1\n</table><script>window.pwned=3</script>\n")
    state = copy.deepcopy(two_rounds().state)
    for rnd in state["review"]["rounds"]:
        for item in rnd["issues"]:
            item["file"] = name
            item["line"] = 2
    html = html_report(state, git_project)
    page = Page(html)
    assert len(page.tags("script")) == 1
    assert not any(name.startswith("on") for _tag, attrs in page.elements for name in attrs)
    assert "&lt;/table&gt;&lt;script&gt;window.pwned=3&lt;/script&gt;" in html
    assert "src/&quot;&gt;&lt;svg onload=alert(1)&gt;.py:2" in html


def test_a_run_before_any_round_and_a_failed_review(git_project: Path) -> None:
    page = Page(html_report(make_state(), git_project))
    assert "No review round has closed yet." in "".join(page.texts["empty"])
    failed = make_state()
    failed["review"] = copy.deepcopy(two_rounds().state["review"])
    failed["review"]["outcome"] = {
        "status": "failed",
        "termination_reason": None,
        "error": {"code": "TOO_FEW_REVIEWERS", "message": HOSTILE, "failed_agents": []},
    }
    html = html_report(failed, git_project)
    assert [attrs["id"] for attrs in Page(html).tags("section")] == ["summary"]
    assert "TOO_FEW_REVIEWERS" in html and "&lt;script&gt;window.pwned=1" in html
