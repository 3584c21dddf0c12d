"""What a review looks at and which findings it keeps, end to end: the real pinned Claude Code CLI, the real
plugin and the scripted model (tests/e2e/fixloop_model.py).

Each scenario runs ``claude -p "/fixloop:review ..."`` in a throwaway copy of the sample project and checks
what the reviewers were handed (their task text), what reached the verifier and the fixer, the run's state
and the report: ``--since REF``, the incremental review of a branch, the baseline (``fixloop baseline add``),
inline ``fixloop: ignore`` marks, path filters, and the volume controls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_runner import git
from fixloop_model import (
    COMMENT_NEW,
    COMMENT_OLD,
    COORDINATOR,
    Edit,
    Scenario,
    fixer,
    issue,
    json_after,
    reviewer,
    start_context,
)
from fixloop_session import CHANGED_FILES, MakeRunner, Session, StartAPI, command_session, run_engine

from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT

JSON = dict[str, Any]

SWALLOWED = issue("swallowed-error")
MISLEADING = issue("misleading-comment")
DUPLICATED = issue("duplicated-total")
UNTESTED = issue("untested-summary")
FILES_HEADER = "Review these changed files (paths relative to the working directory):"


# ------------------------------------------------------------------------------------------------
# Reading a session back
# ------------------------------------------------------------------------------------------------


def tasks_of(session: Session, agent: str) -> list[str]:
    """The task text each run of ``agent`` was handed (its SubagentStart context), in order."""
    return [start_context(group[0]["body"]) or "" for group in session.instances(agent)]


def listed_files(task: str) -> list[str]:
    """The files a reviewer's task tells it to review."""
    lines = task.split(FILES_HEADER, 1)[1].split("\n")[1:]
    files = []
    for line in lines:
        if not line.startswith("- "):
            break
        files.append(line[2:])
    return files


def handed_issues(task: str) -> list[tuple[str, int, str]]:
    """(file, line, category) of each issue a verifier's or a fixer's task hands over."""
    found = json_after(task, "Issues:\n")
    assert isinstance(found, list), task
    return [(item["file"], item["line"], item["category"]) for item in found]


def requirements(task: str) -> list[str]:
    """The ``extra_requirements`` of a reviewer's task document."""
    document = json_after(task, "Task document:\n")
    assert isinstance(document, dict), task
    return [str(item) for item in document["extra_requirements"]]


def start_line_shown(session: Session, text: str) -> bool:
    """Whether the coordinator was shown ``text`` (part of the line the run starts with)."""
    first = session.requests_of(COORDINATOR)[0]
    return json.dumps(text)[1:-1] in json.dumps(first["body"])


def where(item: JSON) -> tuple[str, int, str]:
    return item["file"], item["line"], item["category"]


def check_reviewers(session: Session, files: list[str], rounds: int = 1) -> list[str]:
    """Every reviewer ran ``rounds`` times and was told to review exactly ``files``; the tasks of round 1."""
    for agent in REVIEWER_AGENTS:
        tasks = tasks_of(session, agent)
        assert len(tasks) == rounds, (agent, len(tasks))
        assert all(listed_files(task) == files for task in tasks), (agent, tasks[0][:600])
    return [tasks_of(session, agent)[0] for agent in REVIEWER_AGENTS]


# ------------------------------------------------------------------------------------------------
# Which changes are reviewed
# ------------------------------------------------------------------------------------------------


def test_since_a_tag_reviews_only_the_files_changed_after_it(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    def release_then_change_the_report(project: Path) -> None:
        git(project, "tag", "v1.0")
        report = project / "inventory" / "report.py"
        report.write_text(report.read_text(encoding="utf-8") + "\n# per-SKU totals next\n", encoding="utf-8")
        git(project, "commit", "-q", "-am", "report: a note")

    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        Scenario(),
        arguments="--since v1.0",
        uncommitted=(),
        before=release_then_change_the_report,
    )
    run, tag = session.run, git(session.project, "rev-parse", "v1.0").strip()
    assert run.state["changed_files"] == ["inventory/report.py"]
    assert run.state["base_ref"] == tag
    base = run.state["review_base"]
    assert (base["reason"], base["since"], base["diff_base"], base["branch"]) == (
        "since",
        "v1.0",
        tag,
        "main",
    )
    message = f"Reviewing the changes since v1.0 ({tag[:12]}) and the uncommitted changes."
    assert base["message"] == message
    assert start_line_shown(session, message)
    (task, *_) = check_reviewers(session, ["inventory/report.py"])
    assert f"The changes are against {tag}: see them with `git diff {tag} -- <file>`." in task
    assert "inventory/stock.py" not in task
    (event,) = [e for e in run.of_type("DATA_COLLECTED") if e.get("data_type") == "review_base"]
    assert (event["summary"]["reason"], event["summary"]["count"]) == ("since", 1)
    assert (run.state["status"], session.report["summary"]["initial_issues"]) == ("success", 0)


def test_the_next_review_of_a_branch_covers_only_what_changed_since_the_last_one(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    def commit_the_work_on_a_branch(project: Path) -> None:
        git(project, "checkout", "-q", "-b", "feature")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "feature work")

    first = command_session(
        start_api, make_runner, shared_plugin_data, Scenario(), before=commit_the_work_on_a_branch
    )
    project = first.project
    fork = git(project, "merge-base", "main", "HEAD").strip()
    reviewed_at = git(project, "rev-parse", "HEAD").strip()
    base = first.run.state["review_base"]
    assert (base["reason"], base["base_branch"], base["diff_base"]) == ("merge_base", "main", fork)
    assert first.run.state["changed_files"] == sorted(CHANGED_FILES)
    assert first.run.state["status"] == "success"
    check_reviewers(first, sorted(CHANGED_FILES))

    # The user goes on: one more commit on the branch, touching the report only.
    report = project / "inventory" / "report.py"
    report.write_text(report.read_text(encoding="utf-8") + "\n# per-SKU totals next\n", encoding="utf-8")
    git(project, "commit", "-q", "-am", "report: a note")

    second = command_session(start_api, make_runner, shared_plugin_data, Scenario(), project=project)
    assert second.run.run_id != first.run.run_id
    assert second.run.state["changed_files"] == ["inventory/report.py"]
    base = second.run.state["review_base"]
    assert (base["reason"], base["diff_base"], base["last_review_run"]) == (
        "last_review",
        reviewed_at,
        first.run.run_id,
    )
    message = (
        f"Reviewing the changes since the last fixloop review of branch feature (run {first.run.run_id}, "
        f"commit {reviewed_at[:12]}) and the uncommitted changes."
    )
    assert base["message"] == message
    assert start_line_shown(second, message)
    check_reviewers(second, ["inventory/report.py"])


# ------------------------------------------------------------------------------------------------
# Which findings are kept
# ------------------------------------------------------------------------------------------------


def test_a_baselined_finding_never_reaches_the_verifier_nor_the_fixer(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    # 1. A review finds the swallowed error; the team decides to live with it.
    first = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        Scenario(agents={"silent-failure-hunter": reviewer({1: [{**SWALLOWED, "auto_fixable": False}]})}),
    )
    (remaining,) = first.report["remaining_issues"]
    assert where(remaining) == where(SWALLOWED)
    project = first.project
    code, added = run_engine(
        project,
        "baseline",
        "add",
        remaining["id"],
        "--reason",
        "an empty stock is what the caller wants here",
        plugin_data=shared_plugin_data,
    )
    assert code == 0, added
    (entry,) = added["added"]
    assert (entry["issue_id"], entry["run_id"]) == (remaining["id"], first.run.run_id)
    stored = json.loads((project / ".fixloop" / "baseline.json").read_text(encoding="utf-8"))
    assert stored["findings"] == [entry]

    # 2. The next review: the reviewer reports it again, as fixable this time, beside a new finding.
    second = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        Scenario(
            agents={
                "silent-failure-hunter": reviewer({1: [SWALLOWED]}),
                "comment-analyzer": reviewer({1: [MISLEADING]}),
                FIXER_AGENT: fixer({1: [Edit("inventory/stock.py", COMMENT_OLD, COMMENT_NEW)]}),
            }
        ),
        project=project,
    )
    run, report = second.run, second.report
    # The baseline file is the team's data, not code to review.
    assert run.state["changed_files"] == sorted(CHANGED_FILES)
    # Every reviewer was told what is accepted.
    accepted = (
        "- inventory/stock.py:14 [silent-failure] load_stock returns {} on any error: an unreadable file "
        "looks like empty stock"
    )
    for task in check_reviewers(second, sorted(CHANGED_FILES), rounds=2):
        assert accepted in task
        assert requirements(task)[3] == (
            "Do not report the 1 finding(s) this project accepted (its baseline, listed in the prompt): "
            "fixloop drops them whatever you report."
        )
    # Only the new finding was verified and fixed.
    assert second.dispatched() == [
        list(REVIEWER_AGENTS),
        [VERIFIER_AGENT],
        [FIXER_AGENT],
        list(REVIEWER_AGENTS),
    ]
    (verifier_task,) = tasks_of(second, VERIFIER_AGENT)
    (fixer_task,) = tasks_of(second, FIXER_AGENT)
    assert handed_issues(verifier_task) == handed_issues(fixer_task) == [where(MISLEADING)]
    assert run.round(1)["suppressed"] == {"baseline": 1}
    assert [(item["fingerprint"], item["reason"]) for item in run.round(1)["suppressed_findings"]] == [
        (entry["fingerprint"], "baseline")
    ]
    assert report["status"] == "success"
    assert report["review_iterations"][0]["suppressed"] == {"baseline": 1}
    assert [where(item) for item in report["fixed_issues"]] == [where(MISLEADING)]
    assert report["remaining_issues"] == []
    assert "except Exception:" in (project / "inventory" / "stock.py").read_text(encoding="utf-8")


def test_an_inline_ignore_comment_drops_the_finding_it_marks(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    def mark_the_except(project: Path) -> None:
        # The mark is already in the code before the change under review (committed); a mark the change
        # itself adds would not count.
        stock = project / "inventory" / "stock.py"
        text = stock.read_text(encoding="utf-8")
        marked = "    except Exception:  # fixloop: ignore[silent-failure] an empty stock is wanted\n"
        stock.write_text(text.replace("    except Exception:\n", marked), encoding="utf-8")
        git(project, "add", "inventory/stock.py")
        git(project, "commit", "-q", "-m", "stock: the empty stock is wanted")
        stock.write_text(stock.read_text(encoding="utf-8") + "# the change under review\n", encoding="utf-8")

    kept = {**MISLEADING, "auto_fixable": False}
    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        Scenario(
            agents={
                "silent-failure-hunter": reviewer({1: [SWALLOWED]}),
                "comment-analyzer": reviewer({1: [kept]}),
            }
        ),
        before=mark_the_except,
    )
    run, report = session.run, session.report
    # Nothing fixable is left: no verifier, no fixer.
    assert session.dispatched() == [list(REVIEWER_AGENTS)]
    assert run.round(1)["suppressed"] == {"inline_ignore": 1}
    (dropped,) = run.round(1)["suppressed_findings"]
    assert (dropped["file"], dropped["line"], dropped["reason"]) == (
        "inventory/stock.py",
        14,
        "inline_ignore",
    )
    assert report["review_iterations"][0]["suppressed"] == {"inline_ignore": 1}
    assert [where(item) for item in report["remaining_issues"]] == [where(MISLEADING)]
    (event,) = [e for e in run.of_type("DATA_COLLECTED") if e.get("data_type") == "suppressed_findings"]
    assert event["summary"] == {"iteration": 1, "dropped": 1, "by_reason": {"inline_ignore": 1}}
    assert (
        "Suppressed by a `fixloop: ignore` already in the code: inventory/stock.py:14 (silent-failure)."
        in run.state["final_message"]
    )


def test_an_inline_ignore_the_change_adds_does_not_silence_its_review(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    def add_the_mark(project: Path) -> None:
        # stock.py is committed without the mark; the change under review adds it above the except.
        stock = project / "inventory" / "stock.py"
        git(project, "add", "inventory/stock.py")
        git(project, "commit", "-q", "-m", "stock")
        text = stock.read_text(encoding="utf-8")
        marked = "    except Exception:  # fixloop: ignore[silent-failure] an empty stock is wanted\n"
        stock.write_text(text.replace("    except Exception:\n", marked), encoding="utf-8")

    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        Scenario(agents={"silent-failure-hunter": reviewer({1: [{**SWALLOWED, "auto_fixable": False}]})}),
        before=add_the_mark,
    )
    run = session.run
    assert run.round(1)["suppressed"] == {}
    (refused,) = run.round(1)["inline_marks_refused"]
    assert (refused["file"], refused["line"]) == ("inventory/stock.py", 14)
    assert [where(item) for item in session.report["remaining_issues"]] == [where(SWALLOWED)]
    (warning,) = [e for e in run.of_type("WARNING") if e.get("code") == "INLINE_IGNORE_NOT_COUNTED"]
    assert "inventory/stock.py:14 is new in this change" in warning["message"]
    assert "Not suppressed: the `fixloop: ignore` at inventory/stock.py:14" in run.state["final_message"]


def test_path_filters_keep_excluded_files_from_the_reviewers(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        # A reviewer that strays into the excluded file anyway is not listened to.
        Scenario(agents={"code-simplifier": reviewer({1: [DUPLICATED]})}),
        config={"review_exclude": ["inventory/report.py"]},
    )
    run, report = session.run, session.report
    assert run.state["changed_files"] == ["inventory/stock.py"]
    assert run.state["files_left_out"] == ["inventory/report.py"]
    assert start_line_shown(session, "1 changed file(s) left out by review_include/review_exclude.")
    check_reviewers(session, ["inventory/stock.py"])
    (event,) = [e for e in run.of_type("DATA_COLLECTED") if e.get("data_type") == "path_filters"]
    assert event["summary"] == {"kept": 1, "left_out": ["inventory/report.py"]}
    assert session.dispatched() == [list(REVIEWER_AGENTS)]
    assert run.round(1)["suppressed"] == {"path_filter": 1}
    assert report["review_iterations"][0]["suppressed"] == {"path_filter": 1}
    assert (report["status"], report["remaining_issues"]) == ("success", [])


def test_volume_controls_drop_switched_off_minor_and_surplus_findings(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    reporting = ("comment-analyzer", "code-simplifier", "silent-failure-hunter", "test-analyzer")

    def reported(item: JSON, severity: str) -> JSON:
        return {**item, "severity": severity, "auto_fixable": False}

    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        Scenario(
            agents={
                "comment-analyzer": reviewer({1: [reported(MISLEADING, "critical")]}),
                "code-simplifier": reviewer({1: [reported(DUPLICATED, "medium")]}),
                "silent-failure-hunter": reviewer({1: [reported(SWALLOWED, "high")]}),
                "test-analyzer": reviewer({1: [reported(UNTESTED, "critical")]}),
            }
        ),
        config={"categories": {"comment": False}, "min_severity": "high", "max_findings": 1},
    )
    run, report = session.run, session.report
    for task in check_reviewers(session, sorted(CHANGED_FILES)):
        assert requirements(task)[3:] == [
            "Do not report findings of these categories (turned off): comment.",
            "Only report findings of severity high or higher.",
        ]
    # Every reviewer's findings reached the engine, which then dropped three of the four.
    counts = {
        item["agent"]: (item["status"], item.get("issues_count")) for item in run.round(1)["agents_results"]
    }
    assert counts == {agent: ("success", 1 if agent in reporting else 0) for agent in REVIEWER_AGENTS}, (
        run.round(1)["agents_results"]
    )
    assert run.round(1)["suppressed"] == {"category_off": 1, "below_min_severity": 1, "over_max_findings": 1}
    dropped = {(item["category"], item["reason"]) for item in run.round(1)["suppressed_findings"]}
    assert dropped == {
        ("comment", "category_off"),
        ("duplication", "below_min_severity"),
        ("silent-failure", "over_max_findings"),
    }
    # The one finding kept: the most severe of the rest.
    assert [where(item) for item in report["remaining_issues"]] == [where(UNTESTED)]
    assert report["review_iterations"][0]["suppressed"] == run.round(1)["suppressed"]
