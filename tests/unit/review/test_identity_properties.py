"""Properties of finding identity over generated pairs: findings that name other identifiers or values, or
sit far apart, stay distinct; the same finding re-worded (case, whitespace, punctuation, quotes, line
references, one word more, less or changed) and moved within the tolerance still matches; merging a round
never loses a report; ids survive a round of re-worded, moved findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from helpers_identity import assert_identity
from helpers_review import issue
from hypothesis import given, settings
from hypothesis import strategies as st

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.review.identity import LINE_TOLERANCE, Candidate, Description, closeness
from fixloop.review.issue_registry import IssueRegistry
from fixloop.review.rounds import merge_issues

TEMPLATES = (
    "{name} is never validated before use",
    "Missing null check on {name}",
    "{name} is compared with == instead of ===",
    "Unclosed file handle in {name}",
    "Exception raised by {name} is swallowed silently",
    "SQL query in {name} is built by string concatenation",
    "Race condition: {name} is read and written without a lock",
    "Password passed to {name} is logged in clear text",
    "Timeout of {value} seconds in {name} is too short",
    "{name} retries up to {value} times without backoff",
    "Buffer of {value} bytes allocated by {name} can overflow",
    "{name} returns status {value} on success",
)
FILLERS = ("here", "clearly", "really", "actually", "input", "again")
NAME_STYLES = ("`{}`", '"{}"', "'{}'", "\u201c{}\u201d", "{}", "`{}()`", "{}()")
VALUE_STYLES = ("{}", "`{}`")
LINE_REFERENCES = ("", " (line {})", " at L{}", ", see lines {}-{}")

names = st.one_of(
    st.from_regex(r"[a-z]{2,8}_[a-z0-9]{1,6}", fullmatch=True),
    st.from_regex(r"[a-z]{2,6}[A-Z][a-z]{1,6}", fullmatch=True),
)
values = st.integers(0, 10**6)
lines = st.integers(1, 500)
files = st.sampled_from(("src/app.py", "src/db/models.py", "web/App.tsx"))
categories = st.sampled_from(("bug", "security", "silent-failure"))


@dataclass(frozen=True)
class Finding:
    template: str
    name: str
    value: int
    line: int
    file: str
    category: str

    def text(self, name_style: str = "`{}`", value_style: str = "{}") -> str:
        return self.template.format(name=name_style.format(self.name), value=value_style.format(self.value))

    def issue(
        self, text: str | None = None, line: int | None = None, issue_id: str = "X-1"
    ) -> dict[str, Any]:
        return issue(
            issue_id,
            self.line if line is None else line,
            self.text() if text is None else text,
            file=self.file,
            category=self.category,
        )


findings = st.builds(Finding, st.sampled_from(TEMPLATES), names, values, lines, files, categories)


@st.composite
def reworded(draw: st.DrawFn, finding: Finding) -> tuple[str, int]:
    """Another report of `finding`: (its description, its line)."""
    text = finding.text(draw(st.sampled_from(NAME_STYLES)), draw(st.sampled_from(VALUE_STYLES)))
    words = text.split(" ")
    plain = [index for index, word in enumerate(words) if word.isalpha() and word.islower()]
    edit = draw(st.sampled_from(("none", "insert", "delete", "replace")))
    filler = draw(st.sampled_from(FILLERS))
    if edit == "insert":
        words.insert(draw(st.integers(0, len(words))), filler)
    elif edit in ("delete", "replace") and plain:
        at = draw(st.sampled_from(plain))
        words[at : at + 1] = [] if edit == "delete" else [filler]
    cased = [
        word
        if word.startswith(("`", '"', "'", "\u201c"))
        else draw(st.sampled_from((word, word.upper(), word.title())))
        for word in words
    ]
    spaces = st.sampled_from((" ", "  ", "\t", "\n", " \n "))
    text = "".join(word + draw(spaces) for word in cased).strip()
    shift = draw(st.integers(-LINE_TOLERANCE, LINE_TOLERANCE))
    line = max(1, finding.line + shift)
    reference = draw(st.sampled_from(LINE_REFERENCES)).format(line, line + 2)
    return text + reference + draw(st.sampled_from(("", ".", "!", ";", " ."))), line


def test_every_template_has_at_least_two_words_so_one_word_changed_keeps_half_of_them() -> None:
    for template in TEMPLATES:
        assert len(Description.of(template.format(name="`x_y`", value="1")).words) >= 2, template


@settings(max_examples=300, deadline=None)
@given(finding=findings, other=names, data=st.data())
def test_another_identifier_is_another_finding(finding: Finding, other: str, data: st.DataObject) -> None:
    if other.lower() == finding.name.lower():
        return
    moved = max(1, finding.line + data.draw(st.integers(-LINE_TOLERANCE, LINE_TOLERANCE)))
    text = Finding(finding.template, other, finding.value, moved, finding.file, finding.category).text(
        data.draw(st.sampled_from(NAME_STYLES))
    )
    assert_identity(finding.issue(), finding.issue(text, moved), False)


@settings(max_examples=200, deadline=None)
@given(finding=findings, other=values, style=st.sampled_from(VALUE_STYLES))
def test_another_value_is_another_finding(finding: Finding, other: int, style: str) -> None:
    if "{value}" not in finding.template or other == finding.value:
        return
    changed = Finding(finding.template, finding.name, other, finding.line, finding.file, finding.category)
    assert_identity(finding.issue(), finding.issue(changed.text(value_style=style)), False)


@settings(max_examples=200, deadline=None)
@given(finding=findings, distance=st.integers(LINE_TOLERANCE + 1, 1000), up=st.booleans())
def test_the_same_words_far_apart_are_two_findings(finding: Finding, distance: int, up: bool) -> None:
    line = finding.line - distance if up else finding.line + distance
    if line < 1:
        return
    assert_identity(finding.issue(), finding.issue(line=line), False)


@settings(max_examples=400, deadline=None)
@given(finding=findings, data=st.data())
def test_a_reworded_and_moved_report_is_the_same_finding(finding: Finding, data: st.DataObject) -> None:
    text, line = data.draw(reworded(finding))
    assert_identity(finding.issue(), finding.issue(text, line), True)


reports = st.lists(
    st.tuples(
        st.sampled_from(REVIEWER_AGENTS),
        st.builds(
            Finding,
            st.sampled_from(TEMPLATES[:4]),
            st.sampled_from(("user_id", "email", "getUser")),
            st.sampled_from((3, 30)),
            st.integers(1, 40),
            st.sampled_from(("src/app.py", "src/db.py")),
            st.sampled_from(("bug", "security")),
        ),
        st.sampled_from(NAME_STYLES),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(raw=reports)
def test_merging_a_round_puts_every_report_in_exactly_one_issue(raw: list[tuple[str, Finding, str]]) -> None:
    documents = [
        (agent, finding.issue(finding.text(style), issue_id=f"R-{index}"))
        for index, (agent, finding, style) in enumerate(raw)
    ]
    merged = merge_issues(documents)
    sources = [(source["agent"], source["id"]) for _first, item in merged for source in item["sources"]]
    assert sorted(sources) == sorted((agent, document["id"]) for agent, document in documents)
    by_id = {document["id"]: Candidate.of(document) for _agent, document in documents}
    for first, item in merged:
        assert item["agents"] == list(dict.fromkeys(source["agent"] for source in item["sources"]))
        for source in item["sources"]:
            assert closeness(first, by_id[source["id"]]) is not None
        for agent in item["agents"]:
            # an agent's reports in one issue are one report repeated
            own = {(by_id[s["id"]].fingerprint, s["line"]) for s in item["sources"] if s["agent"] == agent}
            assert len(own) == 1


@settings(max_examples=150, deadline=None)
@given(
    first_round=st.lists(findings, max_size=12, unique_by=lambda finding: finding.name.lower()),
    extra=st.lists(names, max_size=4),
    data=st.data(),
)
def test_ids_survive_a_round_of_reworded_moved_findings(
    first_round: list[Finding], extra: list[str], data: st.DataObject
) -> None:
    registry = IssueRegistry()
    ids = registry.assign([Candidate.of(finding.issue()) for finding in first_round], 1)
    assert ids == [f"FL-{number:03d}" for number in range(1, len(first_round) + 1)]
    known = {finding.name.lower() for finding in first_round}
    new = [
        Finding("Missing null check on {name}", name, 0, 7, "src/app.py", "bug")
        for name in dict.fromkeys(item.lower() for item in extra)
        if name not in known
    ]
    second = [(finding, *data.draw(reworded(finding))) for finding in first_round]
    second = data.draw(st.permutations(second))
    candidates = [Candidate.of(finding.issue(text, line)) for finding, text, line in second]
    candidates += [Candidate.of(finding.issue()) for finding in new]
    assigned = registry.assign(candidates, 2)
    expected = [ids[first_round.index(finding)] for finding, _text, _line in second]
    assert assigned[: len(second)] == expected
    assert assigned[len(second) :] == [
        f"FL-{number:03d}" for number in range(len(ids) + 1, len(ids) + len(new) + 1)
    ]
