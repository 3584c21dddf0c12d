from __future__ import annotations

import json
import multiprocessing
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from helpers_workers import append_many
from hypothesis import given, settings
from hypothesis import strategies as st

from fixloop.core.errors import FixloopError
from fixloop.core.redact import redact
from fixloop.core.timekeeping import text_timestamp, utc_timestamp_ms
from fixloop.store import logtext
from fixloop.store.logtext import render_text
from fixloop.store.logwriter import EventLog, log_file_paths

T0 = 1733495452.123  # 2024-12-06T14:30:52.123Z
BASE = {"ts": "2024-12-06T14:30:52.123Z", "level": "I", "session_id": "a1b2c3d4"}


def fixed_clock() -> float:
    return T0


def make_log(tmp_path: Path, level: str = "info") -> EventLog:
    return EventLog(tmp_path / "run.jsonl", tmp_path / "run.log", "a1b2c3d4", level=level, clock=fixed_clock)


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


# ---- timestamps --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (T0, "2024-12-06T14:30:52.123Z"),
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1733495452.9996, "2024-12-06T14:30:53.000Z"),
        (1733495452.0004, "2024-12-06T14:30:52.000Z"),
        (951782400.5, "2000-02-29T00:00:00.500Z"),
    ],
)
def test_utc_timestamp_ms(now: float, expected: str) -> None:
    assert utc_timestamp_ms(now) == expected


def test_utc_timestamp_ms_defaults_to_now() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", utc_timestamp_ms())


def test_text_timestamp() -> None:
    assert text_timestamp("2024-12-06T14:30:52.123Z") == "2024-12-06 14:30:52.123"
    assert text_timestamp("yesterday") == "yesterday"


def test_log_file_paths_follow_the_design(tmp_path: Path) -> None:
    assert log_file_paths(tmp_path, "frontend", "a1b2c3d4", T0) == (
        tmp_path / "2024-12-06_143052_frontend_a1b2c3d4.jsonl",
        tmp_path / "2024-12-06_143052_frontend_a1b2c3d4.log",
    )
    assert (
        log_file_paths(tmp_path, "../x y", "a1b2c3d4", T0)[0].name == "2024-12-06_143052_x-y_a1b2c3d4.jsonl"
    )


# ---- EventLog ----------------------------------------------------------------------------------------


def test_emit_writes_one_exact_json_line_and_one_exact_text_line(tmp_path: Path) -> None:
    log = make_log(tmp_path / "deep" / "dir")
    event = log.emit("I", "PHASE_START", phase="phase_0", phase_name="问题收集与分类", agents=["a", "b"])
    assert event == {
        "ts": "2024-12-06T14:30:52.123Z",
        "level": "I",
        "type": "PHASE_START",
        "session_id": "a1b2c3d4",
        "phase": "phase_0",
        "phase_name": "问题收集与分类",
        "agents": ["a", "b"],
    }
    assert (tmp_path / "deep/dir/run.jsonl").read_bytes() == (
        '{"ts":"2024-12-06T14:30:52.123Z","level":"I","type":"PHASE_START","session_id":"a1b2c3d4",'
        '"phase":"phase_0","phase_name":"问题收集与分类","agents":["a","b"]}\n'
    ).encode()
    assert (tmp_path / "deep/dir/run.log").read_bytes() == (
        "[2024-12-06 14:30:52.123] INFO | PHASE_START | Phase 0: 问题收集与分类\n".encode()
    )
    assert log.last_error is None


def test_events_are_appended(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    log.emit("I", "AGENT_CALL", agent="code-reviewer", model="sonnet")
    log.emit("E", "ERROR", code="BOOM", message="it broke")
    assert lines(tmp_path / "run.log") == [
        "[2024-12-06 14:30:52.123] INFO | AGENT_CALL | code-reviewer (sonnet)",
        "[2024-12-06 14:30:52.123] ERROR| ERROR | BOOM | it broke",
    ]
    assert [json.loads(line)["type"] for line in lines(tmp_path / "run.jsonl")] == ["AGENT_CALL", "ERROR"]


def test_either_log_may_be_absent(tmp_path: Path) -> None:
    EventLog(tmp_path / "only.jsonl", None, "a1b2c3d4", clock=fixed_clock).emit("I", "X")
    EventLog(None, tmp_path / "only.log", "a1b2c3d4", clock=fixed_clock).emit("I", "X")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["only.jsonl", "only.log"]
    assert lines(tmp_path / "only.log") == ["[2024-12-06 14:30:52.123] INFO | X"]


def test_core_fields_cannot_be_overridden(tmp_path: Path) -> None:
    event = make_log(tmp_path).emit("I", "X", ts="1999-01-01T00:00:00.000Z", session_id="ffffffff", n=1)
    assert event == {**BASE, "type": "X", "n": 1}


def test_debug_events_are_dropped_at_info_level(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    assert log.emit("D", "AGENT_IO", agent="x", direction="input", content="hello") is None
    assert log.last_error is None
    assert not (tmp_path / "run.jsonl").exists()
    assert not (tmp_path / "run.log").exists()


def test_debug_events_are_written_and_redacted_at_debug_level(tmp_path: Path) -> None:
    log = make_log(tmp_path, level="debug")
    content = {"prompt": "use api_key=abc123", "token": "ghp_" + "x" * 36, "n": 1}
    log.emit("D", "AGENT_IO", agent="code-reviewer", direction="input", content=content)
    assert json.loads(lines(tmp_path / "run.jsonl")[0])["content"] == {
        "prompt": "use api_key=[REDACTED]",
        "token": "[REDACTED]",
        "n": 1,
    }
    assert lines(tmp_path / "run.log") == [
        "[2024-12-06 14:30:52.123] DEBUG| AGENT_IO | code-reviewer | input | "
        '{"prompt":"use api_key=[REDACTED]","token":"[REDACTED]","n":1}'
    ]


def test_secrets_in_any_event_are_redacted(tmp_path: Path) -> None:
    make_log(tmp_path).emit("E", "ERROR", code="GIT", message="push failed for https://u:hunter2@host/r")
    assert "hunter2" not in (tmp_path / "run.jsonl").read_text()
    assert "hunter2" not in (tmp_path / "run.log").read_text()


def test_special_characters_stay_one_line_each(tmp_path: Path) -> None:
    message = 'say "hi"\\ then\nnew line\r\ttab \x00 nul \x1b esc \u2028 ls \x85 nel é 😀'
    make_log(tmp_path).emit("W", "WARNING", code="C", message=message)
    jsonl = (tmp_path / "run.jsonl").read_bytes()
    assert jsonl.count(b"\n") == 1
    assert len(jsonl.decode().splitlines()) == 1
    assert json.loads(jsonl)["message"] == message
    assert b"\\u2028" in jsonl
    assert "é 😀".encode() in jsonl  # non-ASCII is written as is
    assert (tmp_path / "run.log").read_text(encoding="utf-8") == (
        '[2024-12-06 14:30:52.123] WARN | WARNING | C | say "hi"\\ then\\nnew line\\r\\ttab \\x00 nul'
        " \\x1b esc \\u2028 ls \\x85 nel é 😀\n"
    )


def test_lone_surrogates_are_replaced(tmp_path: Path) -> None:
    event = make_log(tmp_path).emit("I", "X", message="a\udc80b", **{"k\ud800": "v"})
    assert event is not None
    assert event["message"] == "a\ufffdb"
    assert json.loads((tmp_path / "run.jsonl").read_bytes())["k\ufffd"] == "v"


def test_values_that_are_not_json_become_strings(tmp_path: Path) -> None:
    event = make_log(tmp_path).emit(
        "I", "X", path=Path("/a/b"), ratio=float("nan"), ids=(1, 2), tags={"only"}, keyed={3: "x"}
    )
    assert event is not None
    assert json.loads(lines(tmp_path / "run.jsonl")[0]) == {
        **BASE,
        "type": "X",
        "path": "/a/b",
        "ratio": "nan",
        "ids": [1, 2],
        "tags": ["only"],
        "keyed": {"3": "x"},
    }


def test_io_failures_are_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "run.jsonl").mkdir()  # a directory where the file should be
    log = make_log(tmp_path)
    assert log.emit("I", "X") is None
    assert log.last_error is not None
    assert log.last_error.startswith("IsADirectoryError")
    blocked = EventLog(tmp_path / "file" / "x.jsonl", None, "a1b2c3d4")
    (tmp_path / "file").write_text("a file, not a directory")
    assert blocked.emit("I", "X") is None
    assert blocked.last_error is not None


def test_bad_levels_are_programming_errors(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        EventLog(None, None, "a1b2c3d4", level="verbose")
    assert caught.value.code == "INVALID_LOG_LEVEL"
    with pytest.raises(FixloopError) as caught:
        make_log(tmp_path).emit("Q", "X")
    assert caught.value.code == "INVALID_EVENT_LEVEL"


# ---- text rendering ----------------------------------------------------------------------------------


RENDERED: list[tuple[dict[str, Any], str]] = [
    (
        {"type": "SESSION_START", "workflow": "bugfix", "stack": "frontend"},
        "INFO | SESSION_START | Bugfix Frontend (a1b2c3d4)",
    ),
    ({"type": "SESSION_START", "workflow": "pr-review"}, "INFO | SESSION_START | Pr Review (a1b2c3d4)"),
    (
        {
            "type": "SESSION_END",
            "status": "success",
            "total_duration_ms": 548000,
            "summary": {"files_changed": 2, "review_issues_fixed": 4, "errors_fixed": 3},
        },
        "INFO | SESSION_END | success | 548000ms | files=2 | issues_fixed=4",
    ),
    (
        {"type": "PHASE_START", "phase": "phase_1", "phase_name": "Diagnose"},
        "INFO | PHASE_START | Phase 1: Diagnose",
    ),
    (
        {"type": "PHASE_END", "phase": "phase_0", "status": "success", "duration_ms": 12333},
        "INFO | PHASE_END | Phase 0 | success | 12333ms",
    ),
    (
        {
            "type": "PHASE_END",
            "phase": "phase_0",
            "status": "success",
            "duration_ms": 12333,
            "summary": {"errors_found": 3},
        },
        "INFO | PHASE_END | Phase 0 | success | 12333ms | errors_found=3",
    ),
    (
        {"type": "AGENT_CALL", "agent": "frontend-init-collector", "model": "sonnet"},
        "INFO | AGENT_CALL | frontend-init-collector (sonnet)",
    ),
    ({"type": "AGENT_CALL", "agent": "review-fixer"}, "INFO | AGENT_CALL | review-fixer"),
    (
        {
            "type": "AGENT_RESULT",
            "agent": "frontend-init-collector",
            "status": "success",
            "duration_ms": 4700,
        },
        "INFO | AGENT_RESULT | frontend-init-collector | success | 4700ms",
    ),
    (
        {
            "type": "STEP_START",
            "agent": "collector",
            "step": "config_loading",
            "step_name": "Load config",
            "step_index": 1,
            "total_steps": 3,
        },
        "INFO | STEP_START | collector | Step 1/3: Load config",
    ),
    (
        {
            "type": "STEP_END",
            "agent": "collector",
            "step": "config_loading",
            "status": "success",
            "duration_ms": 1500,
        },
        "INFO | STEP_END | collector | config_loading | success | 1500ms",
    ),
    (
        {
            "type": "TOOL_USE",
            "level": "D",
            "agent": "collector",
            "tool": "Read",
            "target": "config/defaults.yaml",
            "status": "success",
        },
        "DEBUG| TOOL_USE | collector | Read config/defaults.yaml | success",
    ),
    (
        {
            "type": "DATA_COLLECTED",
            "agent": "collector",
            "data_type": "test_output",
            "summary": {"lines": 150, "exit_code": 1, "source": "auto_run"},
        },
        "INFO | DATA_COLLECTED | collector | test_output | lines=150 exit_code=1 source=auto_run",
    ),
    (
        {
            "type": "ANALYSIS_RESULT",
            "agent": "analyzer",
            "analysis_type": "error_classification",
            "result": {"errors_found": 3, "categories": {"mock_conflict": 2}, "files": ["a.tsx", "b.tsx"]},
        },
        "INFO | ANALYSIS_RESULT | analyzer | error_classification | errors_found=3 "
        'categories={"mock_conflict":2} files=[a.tsx,b.tsx]',
    ),
    (
        {
            "type": "CONFIDENCE_DECISION",
            "level": "X",
            "confidence_score": 65,
            "decision": "auto_continue",
            "threshold": {"auto_continue": 60, "ask_user": 40, "stop": 0},
        },
        "DECN | CONFIDENCE_DECISION | score=65 | decision=auto_continue | threshold=60",
    ),
    (
        {
            "type": "USER_INTERACTION",
            "level": "X",
            "question": "Start the fix?",
            "options": ["Confirm", "Adjust", "Cancel"],
        },
        'DECN | USER_INTERACTION | "Start the fix?" | options=[Confirm,Adjust,Cancel]',
    ),
    (
        {
            "type": "USER_INTERACTION",
            "level": "X",
            "question": "Start the fix?",
            "user_response": "Confirm",
            "wait_duration_ms": 15000,
        },
        'DECN | USER_INTERACTION | "Confirm" | wait=15000ms',
    ),
    (
        {
            "type": "USER_INTERACTION",
            "level": "X",
            "context": "review_verification_failed",
            "question": "Verification failed",
        },
        'DECN | USER_INTERACTION | [review_verification_failed] "Verification failed"',
    ),
    ({"type": "REVIEW_VERIFICATION_START", "files_count": 2}, "INFO | REVIEW_VERIFICATION_START | 2 files"),
    (
        {
            "type": "REVIEW_VERIFICATION_END",
            "tests": "passed",
            "lint": "passed",
            "typecheck": "failed",
            "duration_ms": 800,
        },
        "INFO | REVIEW_VERIFICATION_END | tests=passed lint=passed typecheck=failed | 800ms",
    ),
    (
        {"type": "REVIEW_PARALLEL_START", "iteration": 1, "agents": ["a", "b", "c", "d", "e", "f"]},
        "INFO | REVIEW_PARALLEL_START | Iteration 1 | 6 agents (parallel)",
    ),
    (
        {
            "type": "REVIEW_PARALLEL_END",
            "iteration": 2,
            "total_issues": 4,
            "duration_ms": 30000,
            "results": [{"agent": "a", "status": "success", "issues": 2}] * 5
            + [{"agent": "f", "status": "failed", "error": "TIMEOUT"}],
        },
        "INFO | REVIEW_PARALLEL_END | Iteration 2 | success=5/6 | issues=4 | 30000ms",
    ),
    (
        {
            "type": "AGENT_FAILURE",
            "level": "E",
            "iteration": 1,
            "agent": "code-reviewer",
            "error_code": "NULL_RESPONSE",
            "message": "The agent returned nothing",
            "recoverable": True,
        },
        "ERROR| AGENT_FAILURE | code-reviewer | NULL_RESPONSE | The agent returned nothing",
    ),
    (
        {"type": "REVIEW_FIX_ITERATION", "iteration": 1, "direction": "start", "fixable_issues": 3},
        "INFO | REVIEW_FIX_ITERATION | Iteration 1 start | fixable=3",
    ),
    (
        {
            "type": "REVIEW_FIX_ITERATION",
            "iteration": 1,
            "direction": "end",
            "attempted": 3,
            "succeeded": 2,
            "failed": 1,
            "remaining": 1,
            "duration_ms": 9000,
        },
        "INFO | REVIEW_FIX_ITERATION | Iteration 1 end"
        " | attempted=3 succeeded=2 failed=1 remaining=1 | 9000ms",
    ),
    (
        {
            "type": "REVIEW_FIX_ITERATION",
            "iteration": 1,
            "issues_before": 4,
            "issues_after": 1,
            "fixed_count": 3,
            "termination_reason": None,
        },
        "INFO | REVIEW_FIX_ITERATION | Iteration 1 | before=4 | after=1 | fixed=3",
    ),
    (
        {
            "type": "REVIEW_CONVERGENCE",
            "level": "X",
            "decision": "converged",
            "iteration": 2,
            "issues_trend": [4, 1, 0],
            "reason": "no fixable issues left",
        },
        "DECN | REVIEW_CONVERGENCE | no fixable issues left | trend=4,1,0",
    ),
    (
        {
            "type": "REVIEW_CONVERGENCE",
            "level": "W",
            "decision": "diverged",
            "iteration": 2,
            "previous_count": 2,
            "current_count": 5,
        },
        "WARN | REVIEW_CONVERGENCE | Issues increased: 2 → 5",
    ),
    (
        {
            "type": "REVIEW_CONVERGENCE",
            "level": "X",
            "decision": "stopped",
            "iteration": 3,
            "reason": "max iterations",
        },
        "DECN | REVIEW_CONVERGENCE | stopped | max iterations",
    ),
    (
        {
            "type": "REVIEW_COMPLETE",
            "total_iterations": 2,
            "initial_issues": 4,
            "final_issues": 1,
            "fixed_issues": 3,
            "termination_reason": "converged",
            "total_duration_ms": 60000,
        },
        "INFO | REVIEW_COMPLETE | iterations=2 initial=4 fixed=3 remaining=1 | reason=converged | 60000ms",
    ),
    (
        {"type": "WARNING", "level": "W", "code": "GIT_UNAVAILABLE", "message": "not a git repository"},
        "WARN | WARNING | GIT_UNAVAILABLE | not a git repository",
    ),
    (
        {
            "type": "ERROR",
            "level": "E",
            "code": "CONFIDENCE_TOO_LOW",
            "message": "35 < 40",
            "recoverable": False,
        },
        "ERROR| ERROR | CONFIDENCE_TOO_LOW | 35 < 40",
    ),
    (
        {
            "type": "CONTRACT_VIOLATION",
            "level": "E",
            "agent": "code-reviewer",
            "error_code": "CONTRACT",
            "attempts": 2,
            "violations": [{"path": "issues.0.severity", "message": "not a severity"}, {"x": 1}],
        },
        "ERROR| CONTRACT_VIOLATION | code-reviewer | CONTRACT | attempts=2"
        " | issues.0.severity: not a severity",
    ),
    (
        {"type": "CONTRACT_VIOLATION", "level": "E", "agent": "fixer", "attempts": 1, "violations": ["bad"]},
        "ERROR| CONTRACT_VIOLATION | fixer | ? | attempts=1 | bad",
    ),
    (
        {
            "type": "CONTRACT_VIOLATION",
            "level": "E",
            "agent": "verifier",
            "error_code": "NO_JSON_FOUND",
            "attempts": 3,
            "violations": [],
        },
        "ERROR| CONTRACT_VIOLATION | verifier | NO_JSON_FOUND | attempts=3",
    ),
    (
        {"type": "AGENT_IO", "level": "D", "agent": "a", "direction": "output", "content": "x" * 250},
        "DEBUG| AGENT_IO | a | output | " + "x" * 200 + "…",
    ),
    (
        {"type": "CUSTOM_THING", "count": 2, "ok": True, "none": None},
        "INFO | CUSTOM_THING | count=2 ok=true none=null",
    ),
    ({"type": "PHASE_END"}, "INFO | PHASE_END | Phase ? | ? | ?ms"),
]


@pytest.mark.parametrize(
    ("fields", "expected"), RENDERED, ids=[f"{n}-{f['type']}" for n, (f, _) in enumerate(RENDERED)]
)
def test_render_text(fields: dict[str, Any], expected: str) -> None:
    assert render_text({**BASE, **fields}) == f"[2024-12-06 14:30:52.123] {expected}"


def test_render_text_of_a_malformed_event() -> None:
    assert render_text({}) == "[?] ?    | ?"
    assert render_text({"ts": "x", "level": "LONGLEVEL", "type": 5}) == "[x] LONGL| 5"


# ---- properties --------------------------------------------------------------------------------------

# Hypothesis leaves surrogates out of text() unless asked: mix them in, with control and line-break chars.
ANY_CHAR = (
    st.characters()
    | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"])
    | st.sampled_from(
        ["\x00", "\n", "\r", "\t", "\x0b", "\x1c", "\x1b", "\x7f", "\x85", "\u2028", "\u2029", '"', "\\"]
    )
)
ANY_TEXT = st.text(alphabet=ANY_CHAR, max_size=200)
_SURROGATE = re.compile("[\ud800-\udfff]")


@settings(max_examples=200, deadline=None)
@given(message=ANY_TEXT)
def test_any_message_makes_one_valid_json_line_and_one_text_line(message: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        log = EventLog(root / "l.jsonl", root / "l.log", "a1b2c3d4", clock=fixed_clock)
        assert log.emit("E", "ERROR", code="C", message=message) is not None
        jsonl = (root / "l.jsonl").read_bytes()
        text = (root / "l.log").read_bytes()
    assert jsonl.endswith(b"\n")
    assert jsonl.count(b"\n") == 1
    assert len(jsonl.decode("utf-8").splitlines()) == 1
    assert json.loads(jsonl)["message"] == redact(_SURROGATE.sub("\ufffd", message))
    assert text.endswith(b"\n")
    assert text.count(b"\n") == 1
    assert len(text.decode("utf-8").splitlines()) == 1
    assert text.startswith(b"[2024-12-06 14:30:52.123] ERROR| ERROR | C")


@settings(max_examples=100, deadline=None)
@given(
    fields=st.dictionaries(
        st.text(max_size=10),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
            lambda children: st.lists(children, max_size=3) | st.dictionaries(ANY_TEXT, children, max_size=3),
            max_leaves=10,
        ),
        max_size=5,
    )
)
def test_any_event_renders_to_a_single_line(fields: dict[str, Any]) -> None:
    for kind in ("ERROR", "PHASE_END", "REVIEW_PARALLEL_END", "USER_INTERACTION", "CUSTOM"):
        line = render_text({**BASE, **fields, "type": kind})
        assert len(line.splitlines()) == 1
        line.encode("utf-8")  # no lone surrogates


# ---- concurrency -------------------------------------------------------------------------------------


def test_concurrent_appenders_never_interleave_and_both_logs_agree(tmp_path: Path) -> None:
    writers, count = 6, 200
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=append_many, args=(str(tmp_path), w, count)) for w in range(writers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=300)
    assert [process.exitcode for process in processes] == [0] * writers

    seen = set()
    corrupt = 0
    events = []
    for raw in (tmp_path / "c.jsonl").read_bytes().split(b"\n")[:-1]:
        try:
            event = json.loads(raw)
        except ValueError:
            corrupt += 1
            continue
        assert event["message"].startswith(f"w{event['writer']}-{event['number']} ")
        seen.add((event["writer"], event["number"]))
        events.append(event)
    assert corrupt == 0
    assert seen == {(w, n) for w in range(writers) for n in range(count)}
    # One writer orders both files: the text log is the JSONL rendered line by line, and time never goes back.
    assert (tmp_path / "c.log").read_text(encoding="utf-8") == "".join(render_text(e) + "\n" for e in events)
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)

    text_lines = (tmp_path / "c.log").read_text(encoding="utf-8").split("\n")[:-1]
    pattern = re.compile(
        r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] WARN \| WARNING \| W(\d) \| w\1-(\d+) (?:é\"\\n)*"
    )
    matches = [pattern.fullmatch(line) for line in text_lines]
    assert all(matches)
    assert sorted((int(m.group(1)), int(m.group(2))) for m in matches if m) == sorted(seen)


# ---- the text timeline is built without `re`: the same output as the regular expressions give -------

_REFERENCE_UNSAFE = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029\ud800-\udfff]")


def _reference_escape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        char = match.group()
        if char in "\n\r\t":
            return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char]
        if "\ud800" <= char <= "\udfff":
            return "\ufffd"
        return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"

    return _REFERENCE_UNSAFE.sub(one, text)


@settings(max_examples=300, deadline=None)
@given(message=ANY_TEXT.filter(bool))
def test_text_lines_escape_exactly_the_unsafe_characters(message: str) -> None:
    event = {**BASE, "type": "WARNING", "level": "W", "code": "C"}
    head = render_text({**event, "message": ""})
    assert render_text({**event, "message": message}) == f"{head} | {_reference_escape(message)}"


@given(st.text(alphabet=st.sampled_from(list("phase_-2aZ é٣\t ")) | st.characters(), max_size=12))
def test_phase_labels_and_titles_match_their_patterns(word: str) -> None:
    match = re.fullmatch(r"phase_(\w+)", word)
    assert logtext._phase_label({"phase": word}) == (f"Phase {match.group(1)}" if match else word)
    expected_title = " ".join(part.capitalize() for part in re.split(r"[-_\s]+", word) if part)
    assert logtext._title(word) == expected_title
