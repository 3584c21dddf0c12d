from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_runs import FakeClock, read_events

from fixloop.cli import cli
from fixloop.runs import creation, ending, lifecycle, phasebook
from fixloop.store import layout, ledger


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def invoke_json(*args: str) -> tuple[int, Any]:
    code, output = invoke(*args)
    return code, json.loads(output)


@pytest.fixture
def logged_run(git_project: Path, fake_clock: FakeClock) -> dict[str, Any]:
    """A bugfix run: start, phase 0 (2 s), an error, a confidence decision, end. Clock starts 05:46:40 UTC."""
    state = creation.start_run("bugfix", root=git_project, stack="frontend", phase="0,1")["state"]
    run_id = state["run_id"]
    phasebook.phase_start(git_project, run_id, 0)
    fake_clock.advance(2)
    phasebook.phase_end(git_project, run_id, 0, "success", {"errors_found": 3})
    fake_clock.advance(1)
    log = lifecycle.run_log(lifecycle.load_run(git_project, run_id))
    log.emit("E", "ERROR", phase="phase_1", code="CONFIDENCE_TOO_LOW", message="35 < 40", recoverable=False)
    fake_clock.advance(1)
    assert invoke("policy", "confidence", "35", "--run", run_id, "--phase", "1")[0] == 0
    fake_clock.advance(1)
    ending.end_run(git_project, run_id, "failed")
    return lifecycle.load_run(git_project, run_id)


def test_timeline_is_plain_text(logged_run: dict[str, Any]) -> None:
    run_id = logged_run["run_id"]
    code, output = invoke("log", "timeline", run_id)
    assert code == 0
    assert output == (
        f"[2025-12-06 05:46:40.000] INFO | SESSION_START | Bugfix Frontend ({run_id})\n"
        "[2025-12-06 05:46:40.000] INFO | PHASE_START | Phase 0: Collect and classify the failure\n"
        "[2025-12-06 05:46:42.000] INFO | PHASE_END | Phase 0 | success | 2000ms | errors_found=3\n"
        "[2025-12-06 05:46:43.000] ERROR| ERROR | CONFIDENCE_TOO_LOW | 35 < 40\n"
        "[2025-12-06 05:46:44.000] DECN | CONFIDENCE_DECISION | score=35 | decision=stop | threshold=60\n"
        "[2025-12-06 05:46:45.000] INFO | SESSION_END | failed | 5000ms\n"
    )
    assert output == Path(logged_run["logging"]["log_files"]["text"]).read_text()


def test_timeline_filters(logged_run: dict[str, Any]) -> None:
    code, output = invoke("log", "timeline", logged_run["run_id"], "--level", "decision", "--level", "E")
    assert code == 0
    assert output == (
        "[2025-12-06 05:46:43.000] ERROR| ERROR | CONFIDENCE_TOO_LOW | 35 < 40\n"
        "[2025-12-06 05:46:44.000] DECN | CONFIDENCE_DECISION | score=35 | decision=stop | threshold=60\n"
    )


def test_show_filters_by_type_and_level(logged_run: dict[str, Any]) -> None:
    run_id = logged_run["run_id"]
    jsonl = logged_run["logging"]["log_files"]["jsonl"]
    events = read_events(jsonl)
    code, document = invoke_json("log", "show", run_id, "--type", "PHASE_END", "--type", "SESSION_END")
    assert (code, document) == (
        0,
        {
            "log_file": jsonl,
            "count": 2,
            "events": [events[2], events[5]],
            "corrupt_lines": [],
        },
    )
    code, document = invoke_json("log", "show", run_id, "--level", "X")
    assert document["events"] == [events[4]]
    code, document = invoke_json("log", "show", run_id)
    assert document["events"] == events


def test_errors(logged_run: dict[str, Any]) -> None:
    code, document = invoke_json("log", "errors", logged_run["run_id"])
    assert code == 0
    assert document["count"] == 1
    assert {key: value for key, value in document["events"][0].items() if key != "ts"} == {
        "level": "E",
        "type": "ERROR",
        "session_id": logged_run["run_id"],
        "phase": "phase_1",
        "code": "CONFIDENCE_TOO_LOW",
        "message": "35 < 40",
        "recoverable": False,
    }


def test_summary(logged_run: dict[str, Any]) -> None:
    code, document = invoke_json("log", "summary", logged_run["run_id"])
    assert code == 0
    assert document["log_file"] == logged_run["logging"]["log_files"]["jsonl"]
    assert document["status"] == "failed"
    assert document["total_duration_ms"] == 5000
    assert document["phases"] == [{"phase": "phase_0", "status": "success", "duration_ms": 2000}]
    assert document["counts_by_level"] == {"E": 1, "I": 4, "X": 1}
    assert document["event_count"] == 6
    assert document["corrupt_lines"] == 0
    assert document["usage"]["total"]["total_tokens"] == 0


def test_summary_of_a_run_counts_its_tokens(logged_run: dict[str, Any], git_project: Path) -> None:
    run_dir = Path(layout.run_dir(git_project, logged_run["run_id"]))
    spent = {
        "input_tokens": 1000,
        "output_tokens": 200,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    for agent in ("failure-analyst", "coordinator"):
        ledger.append(
            run_dir,
            {
                "kind": "usage",
                "ts_ms": 1,
                "agent": agent,
                "usage": spent,
                "total_tokens": 1200,
                "model": "claude-sonnet-5",
            },
        )
    code, document = invoke_json("log", "summary", logged_run["run_id"])
    assert code == 0
    usage = document["usage"]
    assert sorted(usage["by_agent"]) == ["coordinator", "failure-analyst"]
    assert usage["total"]["total_tokens"] == 2400
    assert usage["total"]["cost_usd"] == 2 * (1000 * 3 + 200 * 15) / 1_000_000
    code, from_file = invoke_json("log", "summary", logged_run["logging"]["log_files"]["jsonl"])
    assert code == 0 and "usage" not in from_file  # a log file alone says nothing of tokens


def test_log_file_path_inside_the_project(logged_run: dict[str, Any], git_project: Path) -> None:
    jsonl = Path(logged_run["logging"]["log_files"]["jsonl"])
    relative = jsonl.relative_to(git_project)
    code, document = invoke_json("log", "show", str(relative), "--type", "SESSION_START")
    assert (code, document["count"]) == (0, 1)


def test_corrupt_lines_are_reported_not_fatal(logged_run: dict[str, Any]) -> None:
    jsonl = Path(logged_run["logging"]["log_files"]["jsonl"])
    with jsonl.open("a") as handle:
        handle.write('{"half": \n')
    code, document = invoke_json("log", "show", logged_run["run_id"], "--type", "SESSION_END")
    assert code == 0
    assert document["count"] == 1
    assert document["corrupt_lines"] == [
        {"line": 7, "reason": "invalid JSON: Expecting value", "preview": '{"half": '}
    ]
    assert invoke_json("log", "summary", logged_run["run_id"])[1]["corrupt_lines"] == 1


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["log", "show", "../x"], "PATH_OUTSIDE_PROJECT"),
        (["log", "show", "/etc/passwd"], "PATH_OUTSIDE_PROJECT"),
        (["log", "show", "a;b"], "PATH_OUTSIDE_PROJECT"),
        (["log", "show", "README.md"], "INVALID_LOG_PATH"),
        (["log", "errors", "missing.jsonl"], "LOG_NOT_FOUND"),
        (["log", "summary", "0badc0de"], "RUN_NOT_FOUND"),
        (["log", "timeline", "0badc0de"], "RUN_NOT_FOUND"),
    ],
)
def test_bad_targets(git_project: Path, args: list[str], code: str) -> None:
    exit_code, document = invoke_json(*args)
    assert (exit_code, document["error"]["code"]) == (2, code)


def test_bad_level(logged_run: dict[str, Any]) -> None:
    exit_code, document = invoke_json("log", "show", logged_run["run_id"], "--level", "loud")
    assert (exit_code, document["error"]["code"]) == (2, "INVALID_ARGUMENT")
    assert document["error"]["valid_values"][:5] == ["I", "D", "W", "E", "X"]


def test_run_without_log(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = creation.start_run("review", root=git_project, log=False)["state"]["run_id"]
    exit_code, document = invoke_json("log", "show", run_id)
    assert (exit_code, document["error"]["code"]) == (2, "NO_LOG")


def _out_of_order_log(root: Path) -> tuple[Path, list[dict[str, Any]], list[bytes]]:
    """A log whose lines are out of time order (ties included), with text that is not ASCII, nested values
    and damaged lines; its events, and its lines."""
    events = [
        {"ts": "2025-12-06T05:46:45.000Z", "level": "I", "type": "SESSION_END", "status": "failed"},
        {"ts": "2025-12-06T05:46:40.000Z", "level": "I", "type": "SESSION_START", "workflow": "review"},
        {"ts": "2025-12-06T05:46:43.000Z", "level": "E", "type": "ERROR", "code": "X", "message": "é\n“q”"},
        {
            "ts": "2025-12-06T05:46:41.000Z",
            "level": "X",
            "type": "CONFIDENCE_DECISION",
            "nested": {"a": [1, {}]},
        },
        {"ts": "2025-12-06T05:46:43.000Z", "level": "E", "type": "AGENT_FAILURE", "agent": "code-reviewer"},
        {
            "ts": "2025-12-06T05:46:42.000Z",
            "level": "I",
            "type": "PHASE_END",
            "phase": "phase_0",
            "empty": [],
        },
    ]
    lines = [json.dumps(event, ensure_ascii=False).encode() for event in events]
    lines[3:3] = [b'{"half": ', b"[]"]
    path = root / "logs" / "run.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, events, lines


def test_streamed_answers_equal_the_whole_log_sorted(git_project: Path) -> None:
    """show, errors and timeline write, one event at a time, exactly what sorting the whole log wrote."""
    from fixloop.store.logtext import render_text

    path, events, _lines = _out_of_order_log(git_project)
    in_time = sorted(events, key=lambda event: event["ts"])
    corrupt = [
        {"line": 4, "reason": "invalid JSON: Expecting value", "preview": '{"half": '},
        {"line": 5, "reason": "not a JSON object", "preview": "[]"},
    ]

    def listing(selected: list[dict[str, Any]]) -> str:
        document = {
            "log_file": str(path),
            "count": len(selected),
            "events": selected,
            "corrupt_lines": corrupt,
        }
        return json.dumps(document, ensure_ascii=False, indent=2) + "\n"

    assert invoke("log", "show", "logs/run.jsonl") == (0, listing(in_time))
    errors = [event for event in in_time if event["level"] == "E"]
    assert [event["type"] for event in errors] == ["ERROR", "AGENT_FAILURE"]  # equal times: file order
    assert invoke("log", "errors", "logs/run.jsonl") == (0, listing(errors))
    assert invoke("log", "show", "logs/run.jsonl", "--type", "NONE") == (0, listing([]))
    timeline = "".join(render_text(event) + "\n" for event in in_time)
    assert invoke("log", "timeline", "logs/run.jsonl") == (0, timeline)


def test_the_streamed_summary_equals_the_summary_document(git_project: Path) -> None:
    from fixloop.report.logquery import summary

    path, events, _lines = _out_of_order_log(git_project)
    code, output = invoke("log", "summary", "logs/run.jsonl")
    document = {"log_file": str(path), **summary(path)}
    assert (code, output) == (0, json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    assert document["confidence_decisions"] == [events[3]]
    assert document["phases"] == [{"phase": "phase_0", "status": None, "duration_ms": None}]
    assert (document["session_start"], document["session_end"]) == (events[1], events[0])
    assert (document["event_count"], document["corrupt_lines"]) == (6, 2)


def test_write_streamed_writes_what_print_json_writes(capsys: pytest.CaptureFixture[str]) -> None:
    from fixloop.cli.log import write_streamed
    from fixloop.cli.output import print_json

    values: list[Any] = [[], [{"a": {"b": [1, 2]}}, "ü", None, 1.5], {"k": []}, "line\nbreak", 0, None]
    document = {f"key {number}": value for number, value in enumerate(values)}
    print_json(document)
    expected = capsys.readouterr().out
    streamed = {key: iter(value) if isinstance(value, list) else value for key, value in document.items()}
    write_streamed(streamed)
    assert capsys.readouterr().out == expected
    write_streamed({})
    print_json({})
    written, printed = capsys.readouterr().out.split("\n")[:2]
    assert written == printed == "{}"
