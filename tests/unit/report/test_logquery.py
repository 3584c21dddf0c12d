from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fixloop.core.errors import FixloopError
from fixloop.report import logquery
from fixloop.report.logquery import CorruptLine, errors, scan_log, show, summary, timeline
from fixloop.store import layout
from fixloop.store.logwriter import EventLog
from fixloop.store.statestore import StateStore

SID = "a1b2c3d4"


def ev(ts: str, level: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"ts": f"2024-12-06T{ts}Z", "level": level, "type": kind, "session_id": SID, **fields}


START = ev("14:30:52.123", "I", "SESSION_START", workflow="bugfix", stack="frontend")
PHASE0_START = ev("14:30:53.456", "I", "PHASE_START", phase="phase_0", phase_name="Collect")
PHASE0_END = ev("14:31:05.789", "I", "PHASE_END", phase="phase_0", status="success", duration_ms=12333)
WARN = ev("14:31:10.500", "W", "WARNING", code="GIT_UNAVAILABLE", message="no git")
DECISION = ev(
    "14:31:15.100",
    "X",
    "CONFIDENCE_DECISION",
    phase="phase_1",
    confidence_score=65,
    threshold={"auto_continue": 60, "ask_user": 40, "stop": 0},
    decision="auto_continue",
)
PHASE1_END = ev("14:31:20.000", "I", "PHASE_END", phase="phase_1", status="failed", duration_ms=14000)
ASK = ev("14:32:00.000", "X", "USER_INTERACTION", question="Go?", user_response="Yes", wait_duration_ms=15000)
FAIL_A = ev("14:33:00.000", "E", "ERROR", code="CONFIDENCE_TOO_LOW", message="35 < 40")
FAIL_B = ev(
    "14:33:00.000", "E", "AGENT_FAILURE", agent="code-reviewer", error_code="NULL_RESPONSE", message="empty"
)
END = ev("14:40:00.000", "I", "SESSION_END", status="success", total_duration_ms=548000)

IN_ORDER = [START, PHASE0_START, PHASE0_END, WARN, DECISION, PHASE1_END, ASK, FAIL_A, FAIL_B, END]


def dumps(event: dict[str, Any]) -> bytes:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Events out of time order, two with the same ts, a blank line and three damaged lines."""
    lines = [
        dumps(START),
        dumps(PHASE0_END),
        dumps(PHASE0_START),
        b"",
        dumps(WARN),
        b'{"ts":"2024-12-06T14:31:11.000Z","level":"I","type":"PHA',  # cut short mid-write
        dumps(DECISION),
        dumps(PHASE1_END),
        dumps(ASK),
        b"[1,2]",
        dumps(FAIL_A),
        dumps(FAIL_B),
        b'{"level":"I","type":"X"}',
        dumps(END),
    ]
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_corrupt_lines_are_reported_not_fatal(log: Path) -> None:
    with scan_log(log) as scan:
        assert (scan.count, scan.corrupt_count, len(list(scan.events()))) == (10, 3, 10)
        corrupt = list(scan.corrupt_lines())
    assert corrupt == [
        CorruptLine(
            6,
            "invalid JSON: Unterminated string starting at",
            '{"ts":"2024-12-06T14:31:11.000Z","level":"I","type":"PHA',
        ),
        CorruptLine(10, "not a JSON object", "[1,2]"),
        CorruptLine(13, "missing ts, level or type", '{"level":"I","type":"X"}'),
    ]


def test_invalid_utf8_is_a_corrupt_line_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\xff\xfe\n" + dumps(START) + b"\n")
    with scan_log(path) as scan:
        assert list(scan.events()) == [START]
        corrupt = [(line.line, line.reason.split(":")[0]) for line in scan.corrupt_lines()]
    assert corrupt == [(1, "invalid JSON")]


def test_show_sorts_by_time_keeping_file_order_for_ties(log: Path) -> None:
    assert show(log) == IN_ORDER


def test_show_filters_by_type_and_level(log: Path) -> None:
    assert show(log, types=["PHASE_END"]) == [PHASE0_END, PHASE1_END]
    assert show(log, levels=["X", "W"]) == [WARN, DECISION, ASK]
    assert show(log, types=["PHASE_END", "ERROR"], levels=["E"]) == [FAIL_A]
    assert show(log, types=[]) == []


def test_errors_are_the_level_e_events(log: Path) -> None:
    assert errors(log) == [FAIL_A, FAIL_B]


def test_summary(log: Path) -> None:
    assert summary(log) == {
        "session_id": SID,
        "workflow": "bugfix",
        "session_start": START,
        "session_end": END,
        "status": "success",
        "total_duration_ms": 548000,
        "phases": [
            {"phase": "phase_0", "status": "success", "duration_ms": 12333},
            {"phase": "phase_1", "status": "failed", "duration_ms": 14000},
        ],
        "event_count": 10,
        "counts_by_level": {"E": 2, "I": 5, "W": 1, "X": 2},
        "counts_by_type": {
            "AGENT_FAILURE": 1,
            "CONFIDENCE_DECISION": 1,
            "ERROR": 1,
            "PHASE_END": 2,
            "PHASE_START": 1,
            "SESSION_END": 1,
            "SESSION_START": 1,
            "USER_INTERACTION": 1,
            "WARNING": 1,
        },
        "confidence_decisions": [DECISION],
        "user_interactions": [ASK],
        "corrupt_lines": 3,
    }


def test_summary_of_an_unfinished_session(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(dumps(START) + b"\n" + dumps(PHASE0_START) + b"\n")
    result = summary(path)
    assert (result["status"], result["session_end"], result["total_duration_ms"]) == (
        "incomplete",
        None,
        None,
    )
    assert result["phases"] == []


def test_summary_computes_the_duration_when_the_end_lacks_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    end = {key: value for key, value in END.items() if key != "total_duration_ms"}
    path.write_bytes(dumps(START) + b"\n" + dumps(end) + b"\n")
    assert summary(path)["total_duration_ms"] == 547877


def test_summary_of_an_empty_log(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    result = summary(path)
    assert result["session_id"] is None
    assert result["event_count"] == 0
    assert result["counts_by_level"] == {}


def test_timeline_is_rendered_in_time_order(log: Path) -> None:
    assert timeline(log) == (
        "[2024-12-06 14:30:52.123] INFO | SESSION_START | Bugfix Frontend (a1b2c3d4)\n"
        "[2024-12-06 14:30:53.456] INFO | PHASE_START | Phase 0: Collect\n"
        "[2024-12-06 14:31:05.789] INFO | PHASE_END | Phase 0 | success | 12333ms\n"
        "[2024-12-06 14:31:10.500] WARN | WARNING | GIT_UNAVAILABLE | no git\n"
        "[2024-12-06 14:31:15.100] DECN | CONFIDENCE_DECISION | score=65 | decision=auto_continue"
        " | threshold=60\n"
        "[2024-12-06 14:31:20.000] INFO | PHASE_END | Phase 1 | failed | 14000ms\n"
        '[2024-12-06 14:32:00.000] DECN | USER_INTERACTION | "Yes" | wait=15000ms\n'
        "[2024-12-06 14:33:00.000] ERROR| ERROR | CONFIDENCE_TOO_LOW | 35 < 40\n"
        "[2024-12-06 14:33:00.000] ERROR| AGENT_FAILURE | code-reviewer | NULL_RESPONSE | empty\n"
        "[2024-12-06 14:40:00.000] INFO | SESSION_END | success | 548000ms\n"
    )


def test_timeline_matches_the_text_log_the_writer_wrote(tmp_path: Path) -> None:
    ticks = iter([1733495452.123, 1733495453.0, 1733495454.5, 1733495460.0])
    writer = EventLog(tmp_path / "r.jsonl", tmp_path / "r.log", SID, clock=lambda: next(ticks))
    writer.emit("I", "SESSION_START", workflow="ci-job")
    writer.emit("W", "WARNING", code="X", message="line one\nline two")
    writer.emit("X", "REVIEW_CONVERGENCE", decision="diverged", previous_count=1, current_count=3)
    writer.emit("I", "SESSION_END", status="failed", total_duration_ms=7877)
    assert timeline(tmp_path / "r.jsonl") == (tmp_path / "r.log").read_text(encoding="utf-8")


def test_a_missing_log(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        scan_log(tmp_path / "nope.jsonl")
    assert caught.value.code == "LOG_NOT_FOUND"


# ---- log_path: a run id or a JSONL file ---------------------------------------------------------


def _make_run(root: Path, run_id: str, logging: dict[str, object]) -> None:
    StateStore(Path(layout.state_path(root, run_id))).create({"run_id": run_id, "logging": logging})


def test_run_id_resolves_to_the_runs_jsonl_log(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    log = root / ".claude/logs/fixloop/bugfix/2024-12-06_143052_frontend_a1b2c3d4.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("")
    _make_run(root, "a1b2c3d4", {"log_files": {"jsonl": str(log.relative_to(root)), "text": "x.log"}})
    assert logquery.log_path(root, "a1b2c3d4") == log


def test_run_id_of_an_unknown_run(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        logquery.log_path(tmp_path, "deadbeef")
    assert caught.value.code == "RUN_NOT_FOUND"
    assert caught.value.details["run_id"] == "deadbeef"


@pytest.mark.parametrize(
    "logging",
    [{}, {"log_files": {}}, {"log_files": {"jsonl": ""}}, {"log_files": {"jsonl": "missing.jsonl"}}],
)
def test_run_without_a_usable_log(tmp_path: Path, logging: dict[str, object]) -> None:
    _make_run(tmp_path, "a1b2c3d4", logging)
    with pytest.raises(FixloopError) as caught:
        logquery.log_path(tmp_path, "a1b2c3d4")
    assert caught.value.code == "NO_LOG"


def test_run_whose_log_lies_outside_the_project(tmp_path: Path) -> None:
    root = tmp_path / "project"
    _make_run(root, "a1b2c3d4", {"log_files": {"jsonl": str(tmp_path / "evil.jsonl")}})
    (tmp_path / "evil.jsonl").write_text("")
    with pytest.raises(FixloopError) as caught:
        logquery.log_path(root, "a1b2c3d4")
    assert caught.value.code == "PATH_OUTSIDE_PROJECT"


def test_path_arguments(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "logs").mkdir()
    (root / "logs" / "run.jsonl").write_text(json.dumps({}) + "\n")
    (root / "logs" / "run.log").write_text("")
    assert logquery.log_path(root, "logs/run.jsonl") == root / "logs" / "run.jsonl"
    with pytest.raises(FixloopError) as caught:
        logquery.log_path(root, "logs/run.log")
    assert caught.value.code == "INVALID_LOG_PATH"
    with pytest.raises(FixloopError) as caught:
        logquery.log_path(root, "logs/none.jsonl")
    assert caught.value.code == "LOG_NOT_FOUND"
    with pytest.raises(FixloopError) as caught:
        logquery.log_path(root, "../other.jsonl")
    assert caught.value.code == "PATH_OUTSIDE_PROJECT"
