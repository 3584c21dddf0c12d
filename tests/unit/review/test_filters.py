"""The engine drops findings the project does not want, whatever the reviewers report: the baseline, inline
`fixloop: ignore` marks, path filters, switched-off categories, min_severity and max_findings."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from helpers_review import CR, SFH, Loop, issue, make_state

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.report.coordinator import coordinator_output
from fixloop.report.markdown import markdown
from fixloop.review.identity import fingerprint
from fixloop.runs import creation
from fixloop.runs.baseline import BASELINE_FILE, BaselineEntry, baseline_text

SQL = issue("S", 12, "SQL built by string concatenation", category="security", severity="critical")
NULL = issue("N", 30, "Missing null check on `user`")


def accept(root: Path, *findings: Mapping[str, Any], reason: str = "known and accepted") -> None:
    entries: list[BaselineEntry] = [
        {
            "fingerprint": fingerprint(item),
            "file": item["file"],
            "line": item["line"],
            "category": item["category"],
            "description": item["description"],
            "reason": reason,
            "issue_id": None,
            "run_id": None,
            "added_at": None,
        }
        for item in findings
    ]
    (root / BASELINE_FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / BASELINE_FILE).write_text(baseline_text(entries))


def open_loop(
    root: Path, changed: Sequence[str] = ("src/app.py",), **config: Any
) -> tuple[Loop, dict[str, Any]]:
    """A loop of a run in `root`, past the initial verification: (the loop, its review action)."""
    state = make_state(changed, use_verifier=False, **config)
    state["project_dir"] = str(root)
    loop = Loop(state)
    loop.next()
    loop.verify(True)
    return loop, loop.next()


def round_one(loop: Loop) -> dict[str, Any]:
    rnd: dict[str, Any] = loop.review_doc["rounds"][0]
    return rnd


def test_a_baselined_finding_never_reaches_the_fixer_even_if_every_reviewer_reports_it(
    tmp_path: Path,
) -> None:
    accept(tmp_path, SQL)
    loop, action = open_loop(tmp_path)
    assert action["action"] == "review"
    # the reviewers are told what is accepted, so they need not spend tokens on it
    assert "- src/app.py:12 [security] SQL built by string concatenation" in action["prompt"]
    assert action["task"]["extra_requirements"][3] == (
        "Do not report the 1 finding(s) this project accepted (its baseline, listed in the prompt): fixloop "
        "drops them whatever you report."
    )
    loop.review({agent: [{**SQL, "id": f"{agent[:2]}-1"}, NULL] for agent in REVIEWER_AGENTS})
    fix = loop.next()
    assert fix["action"] == "fix"
    assert [(item["id"], item["description"]) for item in fix["issues"]] == [
        ("FL-001", "Missing null check on `user`")
    ]
    assert "SQL built" not in fix["prompt"]
    rnd = round_one(loop)
    assert (rnd["fixable"], rnd["issues_found"]) == (["FL-001"], 1)
    assert rnd["suppressed"] == {"baseline": 1}
    assert rnd["suppressed_findings"] == [
        {
            "fingerprint": fingerprint(SQL),
            "file": "src/app.py",
            "line": 12,
            "category": "security",
            "severity": "critical",
            "confidence": 90,
            "reason": "baseline",
        }
    ]
    assert loop.of_type("DATA_COLLECTED") == [
        {
            "data_type": "suppressed_findings",
            "summary": {"iteration": 1, "dropped": 1, "by_reason": {"baseline": 1}},
        }
    ]
    report = coordinator_output(loop.state)
    assert report["review_iterations"][0]["suppressed"] == {"baseline": 1}
    assert "Round 1: 1 finding(s) dropped by the project's rules (baseline 1)." in markdown(loop.state)


def test_only_baselined_findings_leave_nothing_to_fix_nor_remaining(tmp_path: Path) -> None:
    accept(tmp_path, SQL)
    loop, _ = open_loop(tmp_path)
    loop.review({CR: [SQL], SFH: [SQL]})
    stop = loop.next()
    assert (stop["action"], stop["status"], stop["termination_reason"]) == (
        "stop",
        "success",
        "no_fixable_issues",
    )
    assert coordinator_output(loop.state)["remaining_issues"] == []


def test_a_baselined_finding_is_still_recognised_when_its_code_moved_a_little(tmp_path: Path) -> None:
    accept(tmp_path, SQL)
    moved = {**SQL, "line": 22}  # 10 lines lower: another line bucket, so another fingerprint
    far = {**SQL, "id": "S2", "line": 40}
    assert fingerprint(moved) != fingerprint(SQL)
    loop, _ = open_loop(tmp_path)
    loop.review({CR: [moved, far]})
    fix = loop.next()
    assert [item["line"] for item in fix["issues"]] == [40]
    assert round_one(loop)["suppressed"] == {"baseline": 1}


def test_baselined_findings_listed_to_reviewers_are_those_of_the_files_reviewed(tmp_path: Path) -> None:
    accept(tmp_path, SQL, issue("O", 5, "Elsewhere", file="other/x.py"))
    _loop, action = open_loop(tmp_path)
    assert "other/x.py" not in action["prompt"]
    assert "Do not report the 1 finding(s)" in action["task"]["extra_requirements"][3]


def test_a_broken_baseline_stops_the_review_before_any_reviewer_is_asked(tmp_path: Path) -> None:
    (tmp_path / ".fixloop").mkdir()
    (tmp_path / ".fixloop" / "baseline.json").write_text('{"version": 1, "findings": [{"file": 3}]}')
    loop, action = open_loop(tmp_path)
    assert action["action"] == "failed"
    assert action["error"]["code"] == "INVALID_BASELINE"
    assert action["error"]["message"] == (
        f"Invalid baseline {tmp_path / '.fixloop' / 'baseline.json'}: findings[0].fingerprint must be a "
        "non-empty string."
    )
    assert loop.of_type("AGENT_IO") == []
    assert loop.state["status"] == "failed"


def write(root: Path, name: str, *lines: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def test_an_inline_ignore_in_a_python_comment_drops_that_category_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        "src/app.py",
        "import os",
        "",
        "value = eval(data)  # fixloop: ignore[security]",
        "print(value)",
    )
    unsafe = issue("E", 3, "eval of user data", category="security", severity="critical")
    other = issue("F", 3, "value may be None", category="bug")
    loop, _ = open_loop(tmp_path)
    loop.review({CR: [unsafe, other]})
    fix = loop.next()
    assert [item["category"] for item in fix["issues"]] == ["bug"]
    assert round_one(loop)["suppressed"] == {"inline_ignore": 1}


def test_an_inline_ignore_in_a_js_comment_on_the_line_above_drops_any_category(tmp_path: Path) -> None:
    write(
        tmp_path,
        "web/app.js",
        "const a = 1;",
        "// fixloop: ignore",
        "document.write(input);",
        "// fixloop: ignored, not a mark",
        "eval(input);",
    )
    above = issue("X", 3, "XSS through document.write", file="web/app.js", category="security")
    not_marked = issue("Y", 5, "eval of input", file="web/app.js", category="security")
    loop, _ = open_loop(tmp_path, ("web/app.js",))
    loop.review({CR: [above, not_marked]})
    fix = loop.next()
    assert [item["line"] for item in fix["issues"]] == [5]
    assert round_one(loop)["suppressed_findings"][0]["reason"] == "inline_ignore"


def test_switched_off_categories_min_severity_and_max_findings(tmp_path: Path) -> None:
    findings = [
        issue("1", 10, "Naming is inconsistent", category="style", severity="high"),
        issue("2", 20, "Typo in a log message", severity="low"),
        issue("3", 30, "Slow loop", severity="medium", confidence=95),
        issue("4", 40, "Race on the cache", severity="high", confidence=85),
        issue("5", 50, "Crash on empty input", severity="critical", confidence=80),
        issue("6", 60, "Leaks a file handle", severity="high", confidence=90),
    ]
    config = {"categories": {"Style": False, "bug": True}, "min_severity": "medium", "max_findings": 3}
    loop, action = open_loop(tmp_path, **config)
    requirements = action["task"]["extra_requirements"]
    assert "Do not report findings of these categories (turned off): style." in requirements
    assert "Only report findings of severity medium or higher." in requirements
    loop.review({CR: findings})
    fix = loop.next()
    # the most severe first, then the most confident: critical, high 90, high 85; medium 95 is over the limit
    assert sorted(item["description"] for item in fix["issues"]) == [
        "Crash on empty input",
        "Leaks a file handle",
        "Race on the cache",
    ]
    rnd = round_one(loop)
    assert rnd["suppressed"] == {"category_off": 1, "below_min_severity": 1, "over_max_findings": 1}
    assert [(item["line"], item["reason"]) for item in rnd["suppressed_findings"]] == [
        (10, "category_off"),
        (20, "below_min_severity"),
        (30, "over_max_findings"),
    ]
    assert "(category_off 1, below_min_severity 1, over_max_findings 1)" in markdown(loop.state)


def test_a_category_switched_off_in_words_drops_the_reviewers_kebab_case_label(tmp_path: Path) -> None:
    loop, action = open_loop(tmp_path, categories={"Logic Error": False, "style": True})
    assert (
        "Do not report findings of these categories (turned off): logic-error."
        in (action["task"]["extra_requirements"])
    )
    loop.review({CR: [issue("L", 10, "Off by one", category="logic-error"), NULL]})
    fix = loop.next()
    assert [item["description"] for item in fix["issues"]] == ["Missing null check on `user`"]
    assert round_one(loop)["suppressed"] == {"category_off": 1}


def test_path_filters_apply_before_reviewers_are_dispatched(tmp_path: Path) -> None:
    loop, action = open_loop(tmp_path, ("docs/guide.md", "src/app.py"), review_exclude=["docs"])
    assert round_one(loop)["scope"] == ["src/app.py"]
    assert "- src/app.py" in action["prompt"]
    assert "docs/guide.md" not in action["prompt"]
    assert "review 1 changed file(s)" in action["task"]["task_desc"]
    # a reviewer that strays into an excluded file anyway is not listened to
    loop.review({CR: [issue("D", 3, "Broken link", file="docs/guide.md"), NULL]})
    fix = loop.next()
    assert [item["file"] for item in fix["issues"]] == ["src/app.py"]
    assert round_one(loop)["suppressed"] == {"path_filter": 1}


def test_a_run_whose_files_are_all_filtered_out_costs_no_reviewer(git_project: Path) -> None:
    (git_project / ".claude").mkdir()
    (git_project / ".claude" / "fixloop.json").write_text(json.dumps({"review_include": ["src/**/*.ts"]}))
    (git_project / "src" / "app.py").write_text("changed\n")
    state = creation.start_run("review", root=git_project, git_base="")["state"]
    assert state["changed_files"] == []
    loop = Loop(state)
    stop = loop.next()
    assert (stop["action"], stop["termination_reason"]) == ("stop", "no_changes")
    assert loop.of_type("AGENT_IO") == []


def test_nothing_dropped_leaves_the_round_and_the_log_as_before(tmp_path: Path) -> None:
    loop, _ = open_loop(tmp_path)
    loop.review({CR: [NULL]})
    loop.next()
    assert round_one(loop)["suppressed"] == {}
    assert loop.of_type("DATA_COLLECTED") == []
    assert "suppressed" not in coordinator_output(loop.state)["review_iterations"][0]
