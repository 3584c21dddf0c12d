"""The text timeline of a run log: one aligned line per event, `[ts] LEVEL| TYPE | message`.

Standard library only, and no `re`: hooks render every event they write.
"""

from __future__ import annotations

from fixloop.core import jsoncodec
from fixloop.core.timekeeping import text_timestamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

LEVEL_LABELS: dict[str, str] = {"I": "INFO ", "D": "DEBUG", "W": "WARN ", "E": "ERROR", "X": "DECN "}
CORE_FIELDS = ("ts", "level", "type", "session_id")
_TEXT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_IO_PREVIEW_CHARS = 200

_MISSING = "?"


def _fmt(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_fmt(item) for item in value) + "]"
    if isinstance(value, dict):
        return jsoncodec.dumps(value, ensure_ascii=False, allow_nan=True, default=str)
    return str(value)


def _field(event: Mapping[str, Any], key: str) -> str:
    return _fmt(event[key]) if key in event else _MISSING


def _ms(event: Mapping[str, Any], key: str = "duration_ms") -> str:
    return f"{_field(event, key)}ms"


def _pairs(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{key}={_fmt(item)}" for key, item in value.items())
    return "" if value is None else _fmt(value)


def _join(*parts: str) -> str:
    return " | ".join(part for part in parts if part)


def _phase_label(event: Mapping[str, Any]) -> str:
    phase = event.get("phase")
    if isinstance(phase, int) and not isinstance(phase, bool):
        return f"Phase {phase}"
    if isinstance(phase, str):
        name = phase[len("phase_") :]
        if phase.startswith("phase_") and name and name.replace("_", "a").isalnum():
            return f"Phase {name}"
        return phase
    return f"Phase {_MISSING}"


def _iteration(event: Mapping[str, Any]) -> str:
    return f"Iteration {_fmt(event['iteration'])}" if "iteration" in event else ""


def _title(word: Any) -> str:
    return " ".join(part.capitalize() for part in _fmt(word).replace("-", " ").replace("_", " ").split())


def _session_start(event: Mapping[str, Any]) -> str:
    title = " ".join(_title(event[key]) for key in ("workflow", "stack") if event.get(key))
    return f"{title or 'Session'} ({_field(event, 'session_id')})"


def _session_end(event: Mapping[str, Any]) -> str:
    summary = event.get("summary")
    counts: list[str] = []
    if isinstance(summary, dict):
        for key, label in (("files_changed", "files"), ("review_issues_fixed", "issues_fixed")):
            if key in summary:
                counts.append(f"{label}={_fmt(summary[key])}")
    return _join(_field(event, "status"), _ms(event, "total_duration_ms"), *counts)


def _phase_start(event: Mapping[str, Any]) -> str:
    name = event.get("phase_name")
    label = _phase_label(event)
    return f"{label}: {_fmt(name)}" if name else label


def _phase_end(event: Mapping[str, Any]) -> str:
    summary = _pairs(event.get("summary"))
    return _join(_phase_label(event), _field(event, "status"), _ms(event), summary)


def _agent_call(event: Mapping[str, Any]) -> str:
    model = event.get("model")
    agent = _field(event, "agent")
    return f"{agent} ({_fmt(model)})" if model else agent


def _agent_result(event: Mapping[str, Any]) -> str:
    return _join(_field(event, "agent"), _field(event, "status"), _ms(event))


def _step_label(event: Mapping[str, Any]) -> str:
    if "step_index" in event and "total_steps" in event:
        return f"Step {_fmt(event['step_index'])}/{_fmt(event['total_steps'])}"
    return _field(event, "step")


def _step_start(event: Mapping[str, Any]) -> str:
    label = _step_label(event)
    name = event.get("step_name")
    return _join(_field(event, "agent"), f"{label}: {_fmt(name)}" if name else label)


def _step_end(event: Mapping[str, Any]) -> str:
    return _join(_field(event, "agent"), _step_label(event), _field(event, "status"), _ms(event))


def _tool_use(event: Mapping[str, Any]) -> str:
    action = " ".join(_fmt(event[key]) for key in ("tool", "target") if key in event)
    return _join(_fmt(event.get("agent", "")), action or _MISSING, _field(event, "status"))


def _data_collected(event: Mapping[str, Any]) -> str:
    return _join(_fmt(event.get("agent", "")), _field(event, "data_type"), _pairs(event.get("summary")))


def _analysis_result(event: Mapping[str, Any]) -> str:
    return _join(_fmt(event.get("agent", "")), _field(event, "analysis_type"), _pairs(event.get("result")))


def _confidence(event: Mapping[str, Any]) -> str:
    threshold = event.get("threshold", _MISSING)
    if isinstance(threshold, dict):
        threshold = threshold.get("auto_continue", _MISSING)
    return _join(
        f"score={_field(event, 'confidence_score')}",
        f"decision={_field(event, 'decision')}",
        f"threshold={_fmt(threshold)}",
    )


def _user_interaction(event: Mapping[str, Any]) -> str:
    context = f"[{_fmt(event['context'])}] " if event.get("context") else ""
    if "user_response" in event:
        wait = f"wait={_ms(event, 'wait_duration_ms')}" if "wait_duration_ms" in event else ""
        return _join(f'{context}"{_fmt(event["user_response"])}"', wait)
    options = f"options={_fmt(event['options'])}" if "options" in event else ""
    return _join(f'{context}"{_field(event, "question")}"', options)


def _verify_start(event: Mapping[str, Any]) -> str:
    return f"{_field(event, 'files_count')} files"


def _verify_end(event: Mapping[str, Any]) -> str:
    checks = " ".join(f"{key}={_field(event, key)}" for key in ("tests", "lint", "typecheck"))
    return _join(checks, _ms(event))


def _review_start(event: Mapping[str, Any]) -> str:
    agents = event.get("agents")
    count = len(agents) if isinstance(agents, list) else _MISSING
    return _join(_iteration(event), f"{count} agents (parallel)")


def _review_end(event: Mapping[str, Any]) -> str:
    results = event.get("results")
    success: str = _MISSING
    if isinstance(results, list):
        succeeded = sum(1 for item in results if isinstance(item, dict) and item.get("status") == "success")
        success = f"{succeeded}/{len(results)}"
    return _join(
        _iteration(event), f"success={success}", f"issues={_field(event, 'total_issues')}", _ms(event)
    )


def _agent_failure(event: Mapping[str, Any]) -> str:
    return _join(_field(event, "agent"), _field(event, "error_code"), _field(event, "message"))


def _fix_iteration(event: Mapping[str, Any]) -> str:
    iteration = f"Iteration {_field(event, 'iteration')}"
    direction = event.get("direction")
    if direction == "start":
        return _join(f"{iteration} start", f"fixable={_field(event, 'fixable_issues')}")
    if direction == "end":
        counts = " ".join(
            f"{key}={_field(event, key)}" for key in ("attempted", "succeeded", "failed", "remaining")
        )
        return _join(f"{iteration} end", counts, _ms(event))
    return _join(
        iteration,
        f"before={_field(event, 'issues_before')}",
        f"after={_field(event, 'issues_after')}",
        f"fixed={_field(event, 'fixed_count')}",
    )


def _convergence(event: Mapping[str, Any]) -> str:
    decision = event.get("decision")
    if decision == "diverged":
        previous, current = _field(event, "previous_count"), _field(event, "current_count")
        return f"Issues increased: {previous} → {current}"
    trend = event.get("issues_trend")
    trend_text = "trend=" + ",".join(_fmt(item) for item in trend) if isinstance(trend, list) else ""
    reason = _fmt(event["reason"]) if event.get("reason") is not None else ""
    lead = "" if decision == "converged" else _fmt(decision)
    return _join(lead, reason, trend_text) or _MISSING


def _review_complete(event: Mapping[str, Any]) -> str:
    counts = (
        f"iterations={_field(event, 'total_iterations')} initial={_field(event, 'initial_issues')} "
        f"fixed={_field(event, 'fixed_issues')} remaining={_field(event, 'final_issues')}"
    )
    return _join(counts, f"reason={_field(event, 'termination_reason')}", _ms(event, "total_duration_ms"))


def _warning_or_error(event: Mapping[str, Any]) -> str:
    return _join(_field(event, "code"), _field(event, "message"))


def _violation_text(violation: Any) -> str:
    if isinstance(violation, dict):
        where = violation.get("path", violation.get("loc", violation.get("field")))
        message = violation.get("message", violation.get("msg"))
        if message is not None:
            return f"{_fmt(where)}: {_fmt(message)}" if where not in (None, "", []) else _fmt(message)
    return _fmt(violation)


def _contract_violation(event: Mapping[str, Any]) -> str:
    violations = event.get("violations")
    first = _violation_text(violations[0]) if isinstance(violations, list) and violations else ""
    return _join(
        _field(event, "agent"), _field(event, "error_code"), f"attempts={_field(event, 'attempts')}", first
    )


def _agent_io(event: Mapping[str, Any]) -> str:
    content = _fmt(event.get("content"))
    if len(content) > _IO_PREVIEW_CHARS:
        content = content[:_IO_PREVIEW_CHARS] + "…"
    return _join(_field(event, "agent"), _field(event, "direction"), content)


def _generic(event: Mapping[str, Any]) -> str:
    fields = {key: value for key, value in event.items() if key not in CORE_FIELDS}
    return _pairs(fields)


RENDERERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "SESSION_START": _session_start,
    "SESSION_END": _session_end,
    "PHASE_START": _phase_start,
    "PHASE_END": _phase_end,
    "AGENT_CALL": _agent_call,
    "AGENT_RESULT": _agent_result,
    "STEP_START": _step_start,
    "STEP_END": _step_end,
    "TOOL_USE": _tool_use,
    "DATA_COLLECTED": _data_collected,
    "ANALYSIS_RESULT": _analysis_result,
    "CONFIDENCE_DECISION": _confidence,
    "USER_INTERACTION": _user_interaction,
    "REVIEW_VERIFICATION_START": _verify_start,
    "REVIEW_VERIFICATION_END": _verify_end,
    "REVIEW_PARALLEL_START": _review_start,
    "REVIEW_PARALLEL_END": _review_end,
    "AGENT_FAILURE": _agent_failure,
    "REVIEW_FIX_ITERATION": _fix_iteration,
    "REVIEW_CONVERGENCE": _convergence,
    "REVIEW_COMPLETE": _review_complete,
    "WARNING": _warning_or_error,
    "ERROR": _warning_or_error,
    "CONTRACT_VIOLATION": _contract_violation,
    "AGENT_IO": _agent_io,
}


def _text_escapes() -> dict[int, str]:
    """str.translate table of what a one-line text entry may not hold: control characters and line
    breaks (escaped) and unpaired surrogates (U+FFFD)."""
    table: dict[int, str] = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, 0x85)}
    table.update({ord(char): escaped for char, escaped in _TEXT_ESCAPES.items()})
    table.update({0x2028: "\\u2028", 0x2029: "\\u2029"})
    table.update(dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))
    return table


_TEXT_UNSAFE: dict[int, str] = {}


def render_text(event: Mapping[str, Any]) -> str:
    """`[2024-12-06 14:30:52.123] INFO | TAG | message`, always a single line (no trailing newline)."""
    kind = event.get("type")
    renderer = RENDERERS.get(kind, _generic) if isinstance(kind, str) else _generic
    tag = _fmt(kind) if kind not in (None, "") else _MISSING
    message = renderer(event)
    level = _fmt(event.get("level", _MISSING))
    label = LEVEL_LABELS.get(level, f"{level[:5]:<5}")
    head = f"[{text_timestamp(_fmt(event.get('ts', _MISSING)))}] {label}| {tag}"
    line = f"{head} | {message}" if message else head
    if line.isprintable():  # the common case: nothing to escape
        return line
    if not _TEXT_UNSAFE:
        _TEXT_UNSAFE.update(_text_escapes())
    return line.translate(_TEXT_UNSAFE)
