"""The review coordinator's loop as a state machine over the run state's `review` object.

Every public function takes the run state and returns what changed: a `Transition` holding the new state,
the log events to emit as (level, type, fields) tuples, and the answer document for the CLI. By default the
input state is not modified (the functions work on a copy); `inplace=True` skips that copy for callers that
already hold a private copy (StateStore.update hands one out). Side effects on the project (snapshots and
rollbacks) go through an `Effects` object the caller supplies, so the logic is testable without files.
`attach_verification` is the one exception: verification.py calls it as a hook that mutates the state.

The coordinator agent only dispatches on the `action` of `decide_next`:
review | verify_findings | fix | verify | ask_user | stop | failed. See the shared spec, "The review state
machine", and the review-coordinator design for the convergence rules implemented here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from fixloop.contracts.coordinator import LoopConfig
from fixloop.core.agent_names import (
    CONTRACTED_AGENTS,
    FIXER_AGENT,
    REVIEWER_AGENTS,
    VERIFIER_AGENT,
    agent_name,
)
from fixloop.core.errors import FixloopError
from fixloop.core.thresholds import QUALITY_ERROR_CODE, QUALITY_PASS_SCORE
from fixloop.review.identity import Candidate, IssueRegistry
from fixloop.store.logwriter import utc_timestamp_ms

STATE_VERSION = 1
MAX_INVALID_ATTEMPTS = 3
VERIFIER_MAX_DISPATCHES = 3
SEVERITY_RANK: dict[str, int] = {"critical": 4, "high": 3, "medium": 2, "low": 1}
FAILED_STEP_STATUSES = ("failed", "timeout")
VERIFICATION_STEPS = ("tests", "lint", "typecheck")

# termination reason -> the coordinator output's status
TERMINATION_STATUS: dict[str, str] = {
    "no_changes": "success",
    "no_fixable_issues": "success",
    "converged": "partial",
    "max_iterations": "partial",
    "issues_increased": "partial",
    "verification_failed": "partial",
    "user_cancelled": "user_cancelled",
}

CHOICE_DESCRIPTIONS: dict[str, dict[str, str]] = {
    "initial_verification_failed": {
        "continue": "Review anyway, knowing the project does not verify cleanly (risky)",
        "manual": "Stop the review and keep everything as it is, to handle it by hand",
        "cancel": "Cancel the review",
    },
    "review_verification_failed": {
        "rollback": "Undo the fixer's changes of this round (exactly the files it changed) and stop",
        "continue": "Keep the changes and go on to the next review round (risky)",
        "manual": "Keep the changes and stop, to handle the failure by hand",
        "cancel": "Cancel the review, keeping the changes",
    },
    "review_diverged": {
        "rollback": "Undo the last round's fixes (exactly the files the fixer changed) and stop",
        "manual": "Keep the changes and review them by hand",
    },
}

Event = tuple[str, str, dict[str, Any]]


class Effects(Protocol):
    """What the state machine needs done to the project's files."""

    def take_snapshot(self, round_number: int, files: Sequence[str]) -> dict[str, Any]: ...

    def changed_since(self, snapshot: Mapping[str, Any]) -> list[str]: ...

    def rollback(self, snapshot: Mapping[str, Any]) -> list[str]: ...


@dataclass
class Transition:
    state: dict[str, Any]
    events: list[Event] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)


# ---- helpers -------------------------------------------------------------------------------------


def _clone(value: dict[str, Any]) -> dict[str, Any]:
    # The state is JSON data; a JSON round trip is several times faster than copy.deepcopy.
    result: dict[str, Any] = json.loads(json.dumps(value))
    return result


def _now(now_ms: int | None) -> int:
    return now_ms if now_ms is not None else round(time.time() * 1000)


def new_review(now_ms: int) -> dict[str, Any]:
    return {
        "version": STATE_VERSION,
        "started_at_ms": now_ms,
        "ended_at_ms": None,
        "gate": {"requested_at_ms": None, "verification": None, "passed": None, "choice": None},
        "rounds": [],
        "registry": {"next": 1, "issues": []},
        "trend": [],
        "consecutive_no_improvement": 0,
        "question": None,
        "interactions": [],
        "outcome": None,
        "last_action": None,
    }


def review_of(state: dict[str, Any], now_ms: int | None = None) -> dict[str, Any]:
    """The run's review object, created on first use (runs.py starts it as {})."""
    review = state.get("review")
    if not isinstance(review, dict) or review.get("version") != STATE_VERSION:
        review = new_review(_now(now_ms))
        state["review"] = review
    return review


def config_of(state: Mapping[str, Any]) -> LoopConfig:
    raw = state.get("config")
    return LoopConfig.model_validate(raw if isinstance(raw, dict) else {})


def run_id_of(state: Mapping[str, Any]) -> str:
    return str(state.get("run_id") or "")


def current_round(review: Mapping[str, Any]) -> dict[str, Any] | None:
    rounds = review.get("rounds") or []
    last: dict[str, Any] | None = rounds[-1] if rounds else None
    return last


def verification_passed(result: Mapping[str, Any] | None) -> bool:
    if not result:
        return False
    passed = result.get("passed")
    if isinstance(passed, bool):
        return passed
    for name in VERIFICATION_STEPS:
        step = result.get(name)
        if isinstance(step, Mapping) and step.get("status") in FAILED_STEP_STATUSES:
            return False
    return True


def failed_steps_text(result: Mapping[str, Any] | None) -> str:
    parts: list[str] = []
    for name in VERIFICATION_STEPS:
        step = (result or {}).get(name)
        if isinstance(step, Mapping) and step.get("status") in FAILED_STEP_STATUSES:
            reason = step.get("reason") or step.get("status")
            parts.append(f"{name} {step.get('status')} ({reason})")
    return "; ".join(parts) or "verification failed"


def _issue_number(issue_id: str) -> int:
    digits = issue_id.rsplit("-", 1)[-1]
    return int(digits) if digits.isdigit() else 0


def _sorted_ids(ids: Iterable[str]) -> list[str]:
    return sorted(set(ids), key=lambda value: (_issue_number(value), value))


def fixable_ids(issues: Iterable[Mapping[str, Any]], config: LoopConfig) -> list[str]:
    return [
        str(issue["id"])
        for issue in issues
        if int(issue.get("confidence", 0)) >= config.confidence_threshold
        and issue.get("auto_fixable") is True
    ]


def _new_round(number: int, scope: list[str]) -> dict[str, Any]:
    return {
        "iteration": number,
        "scope": scope,
        "pass": 1,
        "retry_context": None,
        "quality_retries": 0,
        "review_requested_at_ms": None,
        "records": {},
        "closed": False,
        "closed_at_ms": None,
        "agents_results": [],
        "issues": [],
        "issues_found": 0,
        "fixable": [],
        "positive_observations": [],
        "verifier": None,
        "passes": [],
        "removed_by_verifier": [],
        "removed_details": {},
        "tracked": False,
        "resolved_issues": [],
        "introduced_issues": [],
        "persisting_issues": [],
        "convergence": None,
        "divergence_choice": None,
        "fix": None,
        "verification": None,
        "verification_passed": None,
        "choice": None,
        "rolled_back": False,
        "rollback_files": [],
    }


def review_scope(state: Mapping[str, Any]) -> list[str]:
    """The files to review: the run's changed files plus every file a kept fix modified."""
    files = {str(item) for item in state.get("changed_files") or []}
    review = state.get("review")
    if isinstance(review, Mapping):
        for rnd in review.get("rounds") or []:
            fix = rnd.get("fix")
            if fix and fix.get("done") and not rnd.get("rolled_back"):
                files.update(fix.get("files_modified") or [])
    return sorted(files)


def _error_doc(
    code: str, message: str, phase: str = "unknown", recoverable: bool = False, stack_trace: str | None = None
) -> dict[str, Any]:
    return {
        "code": code,
        "message": message,
        "phase": phase,
        "recoverable": recoverable,
        "stack_trace": stack_trace,
    }


class _Ctx:
    def __init__(self, state: dict[str, Any], effects: Effects | None, now_ms: int | None) -> None:
        self.state = state
        self.now = _now(now_ms)
        self.review = review_of(state, self.now)
        self.config = config_of(state)
        self.effects = effects
        self.events: list[Event] = []

    def emit(self, level: str, type_: str, **fields: Any) -> None:
        self.events.append((level, type_, fields))

    @property
    def run_id(self) -> str:
        return run_id_of(self.state)


# ---- recording agent results --------------------------------------------------------------------


AgentRole = Literal["reviewer", "fixer", "verifier"]


def agent_role(agent: str) -> AgentRole:
    name = agent_name(agent) or ""
    if name in REVIEWER_AGENTS:
        return "reviewer"
    if name == FIXER_AGENT:
        return "fixer"
    if name == VERIFIER_AGENT:
        return "verifier"
    raise FixloopError(
        "UNKNOWN_AGENT",
        f"Unknown agent {agent!r}.",
        valid_values=list(CONTRACTED_AGENTS),
        received=agent,
    )


def _records_slot(review: dict[str, Any], role: AgentRole, agent: str) -> tuple[dict[str, Any], int]:
    """The dict holding the record of `agent` in the open step of the current round, and the round."""
    if review.get("outcome"):
        raise _unexpected(agent, "the review has already finished")
    rnd = current_round(review)
    if rnd is None:
        raise _unexpected(agent, "no review round has been requested yet")
    number = int(rnd["iteration"])
    if role == "reviewer":
        if rnd["review_requested_at_ms"] is None or rnd["closed"]:
            raise _unexpected(agent, f"round {number} is not waiting for reviewers")
        records: dict[str, Any] = rnd["records"]
        return records, number
    if role == "verifier":
        verifier = rnd.get("verifier")
        if not verifier or verifier.get("done"):
            raise _unexpected(agent, f"round {number} is not waiting for the verifier")
        return verifier, number
    fix = rnd.get("fix")
    if not fix or fix.get("done"):
        raise _unexpected(agent, f"round {number} is not waiting for the fixer")
    return fix, number


def _unexpected(agent: str, why: str) -> FixloopError:
    return FixloopError(
        "UNEXPECTED_AGENT_RESULT",
        f"Result of {agent} not recorded: {why}.",
        agent=agent,
        suggestion="Run `fixloop review next RUN` to see what the loop is waiting for.",
    )


def record_agent_result(
    state: dict[str, Any],
    agent: str,
    document: Mapping[str, Any] | None,
    error: Mapping[str, Any] | None = None,
    *,
    provenance: str = "cli",
    agent_id: str | None = None,
    now_ms: int | None = None,
    inplace: bool = False,
) -> Transition:
    """Record one agent answer: a validated document, or the validation error of an invalid answer.

    The same agent in the same round replaces its earlier valid answer; an invalid answer never replaces a
    valid one. Every call counts as an attempt; after MAX_INVALID_ATTEMPTS invalid ones `retry` turns false
    and a CONTRACT_VIOLATION event is returned. The document holds the CLI answer fields.
    """
    if document is None and error is None:
        raise ValueError("record_agent_result needs a document or an error")
    work = state if inplace else _clone(state)
    ctx = _Ctx(work, None, now_ms)
    role = agent_role(agent)
    name = agent_name(agent) or ""
    container, number = _records_slot(ctx.review, role, name)
    if role == "reviewer":
        record = container.setdefault(name, _new_record(name))
    else:
        record = container.get("record") or _new_record(name)
        container["record"] = record

    problem = dict(error) if error is not None else None
    if problem is None and document is not None:
        claimed = agent_name(document.get("agent"))
        if claimed != name:
            problem = {
                "code": "AGENT_MISMATCH",
                "message": f"The document names agent {document.get('agent')!r}, "
                f"but it was recorded as {name}.",
                "violations": [{"path": "$.agent", "message": f"must be {name}"}],
                "hint": f'Set "agent": "{name}" in the JSON document.',
            }

    record["attempts"] += 1
    record["recorded_at_ms"] = ctx.now
    record["provenance"] = provenance
    record["agent_id"] = agent_id
    retry = False
    hint: str | None = None
    if problem is None:
        assert document is not None
        record["valid"] = True
        record["document"] = dict(document)
        record["error"] = None
        ctx.emit("D", "AGENT_IO", agent=name, direction="output", iteration=number, content=dict(document))
    else:
        record["invalid_attempts"] += 1
        record["last_error"] = problem
        if not record["valid"]:
            record["error"] = problem
        hint = problem.get("hint") if isinstance(problem.get("hint"), str) else None
        if record["valid"]:
            hint = (hint + " " if hint else "") + "An earlier valid answer of this agent is kept."
        retry = not record["valid"] and record["invalid_attempts"] < MAX_INVALID_ATTEMPTS
        if record["invalid_attempts"] == MAX_INVALID_ATTEMPTS:
            record["exhausted"] = True
            violations = problem.get("violations")
            ctx.emit(
                "E",
                "CONTRACT_VIOLATION",
                agent=name,
                error_code=str(problem.get("code", "SCHEMA_VIOLATION")),
                attempts=record["invalid_attempts"],
                violations=violations if isinstance(violations, list) else [],
                iteration=number,
            )
    answer = {
        "status": "recorded",
        "agent": name,
        "round": number,
        "valid": problem is None,
        "retry": retry,
        "attempt": record["attempts"],
        "error": problem,
        "hint": hint,
        # What hooks report of the call, so that they never parse the answer again.
        "agent_status": document.get("status") if problem is None and document is not None else None,
        "issues_count": len(document.get("issues") or [])
        if problem is None and document is not None and role == "reviewer"
        else None,
    }
    return Transition(work, ctx.events, answer)


def _new_record(agent: str) -> dict[str, Any]:
    return {
        "agent": agent,
        "attempts": 0,
        "invalid_attempts": 0,
        "valid": False,
        "exhausted": False,
        "document": None,
        "error": None,
        "last_error": None,
        "provenance": None,
        "agent_id": None,
        "recorded_at_ms": None,
    }


# ---- verification --------------------------------------------------------------------------------


def verification_slot(state: Mapping[str, Any]) -> str | None:
    """Where a verification result goes now: "initial", "post_fix", or None when the loop waits for none.

    The initial gate only takes a result once `review next` asked for it (a `fixloop verify` of an earlier
    workflow phase is not the review's gate). The post-fix slot opens when the round's fixer has answered
    (or the fix was closed by `review next`).
    """
    review = state.get("review")
    if not isinstance(review, Mapping) or review.get("version") != STATE_VERSION or review.get("outcome"):
        return None
    gate = review["gate"]
    if gate["verification"] is None:
        return "initial" if gate["requested_at_ms"] is not None else None
    rnd = current_round(review)
    fix = rnd.get("fix") if rnd is not None else None
    if rnd is None or not fix or rnd.get("verification") is not None:
        return None
    answered = fix.get("done") or (fix.get("record") or {}).get("valid")
    return "post_fix" if answered else None


def attach_verification(state: dict[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """Store a `fixloop verify` result in the slot the loop waits for (mutates and returns `state`).

    See verification_slot. A result nobody waits for changes nothing here (verification.py keeps it in
    state["verification"] anyway).
    """
    slot = verification_slot(state)
    if slot is None:
        return state
    review = review_of(state)
    stored = dict(result)
    if slot == "initial":
        review["gate"]["verification"] = stored
        review["gate"]["passed"] = verification_passed(stored)
    else:
        rnd = current_round(review)
        assert rnd is not None
        rnd["verification"] = stored
        rnd["verification_passed"] = verification_passed(stored)
    return state


# ---- the next action ----------------------------------------------------------------------------


def decide_next(
    state: dict[str, Any],
    effects: Effects | None = None,
    now_ms: int | None = None,
    inplace: bool = False,
) -> Transition:
    """Advance the loop as far as the recorded results allow and return the next action document."""
    work = state if inplace else _clone(state)
    ctx = _Ctx(work, effects, now_ms)
    action = _next_action(ctx)
    ctx.review["last_action"] = {"action": action["action"], "round": action.get("round"), "at_ms": ctx.now}
    return Transition(work, ctx.events, action)


def _next_action(ctx: _Ctx) -> dict[str, Any]:
    review = ctx.review
    if review.get("outcome"):
        return _terminal_action(ctx)
    if not review["rounds"] and not ctx.state.get("changed_files"):
        return _finish(ctx, "no_changes")

    gate = review["gate"]
    if gate["verification"] is None:
        if gate["requested_at_ms"] is None:
            gate["requested_at_ms"] = ctx.now
        return _verify_action(ctx, 0, "initial")
    if not gate["passed"]:
        if gate["choice"] is None:
            return _ask(ctx, "initial_verification_failed", 0, gate["verification"])
        if gate["choice"] == "cancel":
            return _finish(ctx, "user_cancelled")
        if gate["choice"] != "continue":
            return _finish(ctx, "verification_failed")

    rnd = current_round(review)
    if rnd is None:
        rnd = _new_round(1, review_scope(ctx.state))
        review["rounds"].append(rnd)

    while True:
        if rnd["review_requested_at_ms"] is None:
            return _request_review(ctx, rnd)
        if not rnd["closed"]:
            failure = close_round(ctx, rnd)
            if failure is not None:
                return failure
        verifier_action = _verifier_step(ctx, rnd)
        if verifier_action is not None:
            return verifier_action
        if not rnd["tracked"]:
            _track(ctx, rnd)
        if rnd["convergence"] == "diverged":
            if rnd["divergence_choice"] is None:
                return _ask(ctx, "review_diverged", rnd["iteration"], None)
            return _finish(ctx, "issues_increased")
        if rnd["convergence"] == "converged":
            return _finish(ctx, "converged")
        if not rnd["fixable"]:
            return _finish(ctx, "no_fixable_issues")
        fix = rnd["fix"]
        if fix is None:
            if fixes_done(review) >= ctx.config.max_review_iterations:
                return _finish(ctx, "max_iterations")
            if ctx.state.get("dry_run"):
                return _finish(ctx, None)  # a dry run reports what would be fixed and changes nothing
            return _request_fix(ctx, rnd)
        if not fix["done"]:
            _close_fix(ctx, rnd)
        if rnd["verification"] is None:
            return _verify_action(ctx, rnd["iteration"], "post_fix")
        if not rnd["verification_passed"]:
            if rnd["choice"] is None:
                return _ask(ctx, "review_verification_failed", rnd["iteration"], rnd["verification"])
            if rnd["choice"] == "cancel":
                return _finish(ctx, "user_cancelled")
            if rnd["choice"] != "continue":
                return _finish(ctx, "verification_failed")
        rnd = _new_round(int(rnd["iteration"]) + 1, review_scope(ctx.state))
        review["rounds"].append(rnd)


def fixes_done(review: Mapping[str, Any]) -> int:
    return sum(1 for rnd in review.get("rounds") or [] if rnd.get("fix"))


def _verify_action(ctx: _Ctx, number: int, slot: str) -> dict[str, Any]:
    return {
        "action": "verify",
        "round": number,
        "slot": slot,
        "command": f"fixloop verify {ctx.run_id}",
        "next_command": f"fixloop review next {ctx.run_id}",
    }


# ---- review passes -------------------------------------------------------------------------------


def review_task(state: Mapping[str, Any], rnd: Mapping[str, Any]) -> dict[str, Any]:
    """The supervisor design's task document shared by the reviewers of this round's current pass."""
    config = config_of(state)
    run_id = run_id_of(state)
    base_ref = state.get("base_ref")
    retry = rnd.get("retry_context") or {
        "attempt_number": 1,
        "previous_errors": [],
        "recovery_actions_taken": [],
    }
    requirements = [
        f"Only report issues with confidence >= {config.confidence_threshold}.",
        "Only review the listed files; report paths relative to the working directory.",
        "Set auto_fixable to true only for a mechanical fix that needs no design decision.",
    ]
    if retry["attempt_number"] > 1:
        requirements.append(
            "The previous review of this round was rejected as low quality: verify every finding against the "
            "code, cite exact lines, and drop speculative or style-only findings."
        )
        for missing in rnd.get("missing_issues") or []:
            requirements.append(f"The verifier says the review missed: {missing}")
    workflow = state.get("workflow")
    desc = (
        f"fixloop run {run_id}, review round {rnd['iteration']} (workflow {workflow}): review "
        f"{len(rnd.get('scope') or [])} changed file(s)" + (f" against {base_ref}" if base_ref else "") + "."
    )
    return {
        "task_id": f"{run_id}-r{rnd['iteration']}",
        "review_type": "diff" if base_ref else "file",
        "working_directory": str(state.get("project_dir") or "/"),
        "task_desc": desc,
        "priority_focus": [],
        "extra_requirements": requirements,
        "retry_context": retry,
    }


def reviewer_prompt(state: Mapping[str, Any], rnd: Mapping[str, Any], task: Mapping[str, Any]) -> str:
    config = config_of(state)
    files = rnd.get("scope") or []
    base_ref = state.get("base_ref")
    lines = [
        f"fixloop run {run_id_of(state)}: review round {rnd['iteration']}"
        + (f", attempt {task['retry_context']['attempt_number']}" if rnd.get("pass", 1) > 1 else "")
        + ".",
        f"Working directory: {task['working_directory']}",
        "",
        "Review these changed files (paths relative to the working directory):",
        *[f"- {name}" for name in files],
    ]
    if base_ref:
        lines += ["", f"The changes are against {base_ref}: see them with `git diff {base_ref} -- <file>`."]
    lines += [
        "",
        f"Report only issues with confidence >= {config.confidence_threshold} (0-100). "
        "Set auto_fixable to true only when the fix is mechanical and needs no design decision.",
    ]
    retry = task.get("retry_context") or {}
    if int(retry.get("attempt_number", 1)) > 1:
        lines += [
            "",
            f"RETRY (attempt {retry['attempt_number']}): the previous review of this round was rejected.",
            *[f"- previous error: {item}" for item in retry.get("previous_errors", [])],
            "Be stricter this time: check every finding against the code, give exact file and line, "
            "and leave out speculative or style-only findings.",
        ]
        for missing in rnd.get("missing_issues") or []:
            lines.append(f"- the verifier says the review missed: {missing}")
    lines += [
        "",
        "Task document:",
        json.dumps(task, ensure_ascii=False, indent=2),
        "",
        "Answer with exactly one JSON object, the reviewer contract (`fixloop schema reviewer`): "
        '{"status": "success", "agent": "<your agent name, e.g. code-reviewer>", "issues": [{"id", '
        '"severity": "critical|high|medium|low", "confidence": 0-100, "file", "line", "end_line"?, '
        '"category", "description", "suggestion", "auto_fixable", "existing_code"?, "improved_code"?}], '
        '"positive_observations": []}. On failure: {"status": "failed", "agent", "error": {"code", '
        '"message", "phase", "recoverable"}}. Your final message is recorded as your result: '
        "output the JSON only.",
    ]
    return "\n".join(lines)


def _request_review(ctx: _Ctx, rnd: dict[str, Any]) -> dict[str, Any]:
    if rnd["iteration"] > 1 or rnd["pass"] > 1:
        rnd["scope"] = review_scope(ctx.state)
    rnd["review_requested_at_ms"] = ctx.now
    rnd["records"] = {}
    task = review_task(ctx.state, rnd)
    for agent in REVIEWER_AGENTS:
        ctx.emit("D", "AGENT_IO", agent=agent, direction="input", iteration=rnd["iteration"], content=task)
    return review_action(ctx.state, rnd, task)


def review_action(
    state: Mapping[str, Any], rnd: Mapping[str, Any], task: Mapping[str, Any]
) -> dict[str, Any]:
    run_id = run_id_of(state)
    return {
        "action": "review",
        "round": rnd["iteration"],
        "attempt": task["retry_context"]["attempt_number"],
        "agents": [f"fixloop:{agent}" for agent in REVIEWER_AGENTS],
        "task": dict(task),
        "prompt": reviewer_prompt(state, rnd, task),
        "next_command": f"fixloop review next {run_id}",
    }


def _agent_result(
    rnd: Mapping[str, Any], agent: str
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """(agents_results entry, issues, positive observations) of one reviewer in the closing pass."""
    record = rnd["records"].get(agent)
    if record is None:
        error = _error_doc("NULL_RESPONSE", f"Agent {agent} returned nothing", "execution", True)
        return {"agent": agent, "status": "failed", "error": error}, [], []
    if not record["valid"]:
        problem = record.get("error") or {}
        error = _error_doc(
            str(problem.get("code") or "SCHEMA_VIOLATION"),
            str(problem.get("message") or f"Agent {agent} returned an invalid result"),
            "parsing",
            False,
        )
        return {"agent": agent, "status": "failed", "error": error}, [], []
    document = record["document"] or {}
    if document.get("status") != "success":
        problem = document.get("error") or {}
        error = _error_doc(
            str(problem.get("code") or "UNKNOWN_ERROR"),
            str(problem.get("message") or "unknown error"),
            str(problem.get("phase") or "unknown"),
            bool(problem.get("recoverable", False)),
            problem.get("stack_trace"),
        )
        return {"agent": agent, "status": "failed", "error": error}, [], []
    issues = list(document.get("issues") or [])
    observations = [str(item) for item in document.get("positive_observations") or []]
    return {"agent": agent, "status": "success", "issues_count": len(issues)}, issues, observations


def close_round(ctx: _Ctx, rnd: dict[str, Any]) -> dict[str, Any] | None:
    """Close the open review pass: agent results, coverage, merged issues with stable ids, fixable ids.

    Returns the `failed` action when coverage is insufficient, else None.
    """
    number = int(rnd["iteration"])
    agents_results: list[dict[str, Any]] = []
    raw: list[tuple[str, dict[str, Any]]] = []
    observations: list[str] = []
    for agent in REVIEWER_AGENTS:
        result, issues, positive = _agent_result(rnd, agent)
        agents_results.append(result)
        if result["status"] == "success":
            raw.extend((agent, issue) for issue in issues)
            observations.extend(item for item in positive if item not in observations)
            continue
        error = result["error"]
        ctx.emit(
            "E",
            "AGENT_FAILURE",
            iteration=number,
            agent=agent,
            error_code=error["code"],
            message=error["message"],
            phase=error["phase"],
            recoverable=error["recoverable"],
        )
    rnd["closed"] = True
    rnd["closed_at_ms"] = ctx.now
    rnd["agents_results"] = agents_results
    # The raw documents are merged below; keep the records small (the issues live on in `issues`).
    for record in rnd["records"].values():
        if record.get("document"):
            record["document"] = {
                key: value for key, value in record["document"].items() if key != "issues"
            } | {"issues_count": len(record["document"].get("issues") or [])}

    succeeded = sum(1 for item in agents_results if item["status"] == "success")
    if succeeded < ctx.config.min_required_agents:
        failed_agents = [item for item in agents_results if item["status"] == "failed"]
        error = {
            "code": "INSUFFICIENT_COVERAGE",
            "message": f"Only {succeeded}/{len(REVIEWER_AGENTS)} review agents succeeded "
            f"(at least {ctx.config.min_required_agents} required)",
            "failed_agents": failed_agents,
            "suggestion": "Check why the failed agents failed, fix the cause and run the review again.",
        }
        return _fail(ctx, error)

    registry = IssueRegistry.from_json(ctx.review.get("registry"))
    merged = merge_issues(raw)
    ids = registry.assign([candidate for candidate, _issue in merged], number)
    round_issues: list[dict[str, Any]] = []
    for issue_id, (_candidate, issue) in zip(ids, merged, strict=True):
        issue["id"] = issue_id
        round_issues.append(issue)
    round_issues.sort(key=lambda item: (_issue_number(item["id"]), item["id"]))
    ctx.review["registry"] = registry.to_json()
    rnd["issues"] = round_issues
    rnd["issues_found"] = len(round_issues)
    rnd["fixable"] = fixable_ids(round_issues, ctx.config)
    rnd["positive_observations"] = observations
    return None


def merge_issues(raw: Sequence[tuple[str, Mapping[str, Any]]]) -> list[tuple[Candidate, dict[str, Any]]]:
    """One issue per fingerprint, listing every reporting agent, in first-seen order (linear time).

    The merged issue takes its text from the most confident report (then the most severe, then the first),
    the highest confidence and severity of all reports, the span of all their lines, and is auto-fixable
    when any report says so.
    """
    merged: dict[str, tuple[Candidate, dict[str, Any], tuple[int, int]]] = {}
    for agent, issue in raw:
        candidate = Candidate.of(issue)
        source = {
            "agent": agent,
            "id": issue.get("id"),
            "line": candidate.line,
            "end_line": issue.get("end_line"),
            "confidence": issue.get("confidence"),
        }
        rank = (int(issue.get("confidence", 0)), SEVERITY_RANK.get(str(issue.get("severity")), 0))
        found = merged.get(candidate.fingerprint)
        if found is None:
            entry = {
                "id": None,
                "fingerprint": candidate.fingerprint,
                "file": candidate.file,
                "line": candidate.line,
                "end_line": issue.get("end_line"),
                "severity": issue.get("severity"),
                "confidence": issue.get("confidence"),
                "category": issue.get("category"),
                "rule": issue.get("rule"),
                "description": issue.get("description"),
                "suggestion": issue.get("suggestion"),
                "auto_fixable": issue.get("auto_fixable") is True,
                "existing_code": issue.get("existing_code"),
                "improved_code": issue.get("improved_code"),
                "agents": [agent],
                "sources": [source],
            }
            merged[candidate.fingerprint] = (candidate, entry, rank)
            continue
        first, entry, best = found
        if agent not in entry["agents"]:
            entry["agents"].append(agent)
        entry["sources"].append(source)
        lines = [int(item["line"]) for item in entry["sources"]]
        ends = [int(item["end_line"] or item["line"]) for item in entry["sources"]]
        entry["line"] = min(lines)
        spans = len(set(lines)) > 1 or any(item["end_line"] for item in entry["sources"])
        entry["end_line"] = max(ends) if spans else None
        entry["auto_fixable"] = entry["auto_fixable"] or issue.get("auto_fixable") is True
        entry["confidence"] = max(int(entry["confidence"]), int(issue.get("confidence", 0)))
        if SEVERITY_RANK.get(str(issue.get("severity")), 0) > SEVERITY_RANK.get(str(entry["severity"]), 0):
            entry["severity"] = issue.get("severity")
        if rank > best:
            for key in ("category", "rule", "description", "suggestion", "existing_code", "improved_code"):
                entry[key] = issue.get(key)
            merged[candidate.fingerprint] = (first, entry, rank)
    return [(candidate, entry) for candidate, entry, _rank in merged.values()]


# ---- the verifier --------------------------------------------------------------------------------


def _verifier_step(ctx: _Ctx, rnd: dict[str, Any]) -> dict[str, Any] | None:
    if not ctx.config.use_verifier or not rnd["fixable"]:
        return None
    verifier = rnd["verifier"]
    if verifier is None:
        rnd["verifier"] = {
            "requested_at_ms": ctx.now,
            "dispatches": 1,
            "errors": [],
            "record": None,
            "done": False,
            "unavailable": False,
            "score": None,
            "quality_level": None,
        }
        return verify_findings_action(ctx.state, rnd)
    if verifier["done"]:
        return None
    return apply_verifier(ctx, rnd)


def verify_findings_action(state: Mapping[str, Any], rnd: Mapping[str, Any]) -> dict[str, Any]:
    wanted = set(rnd["fixable"])
    issues = [issue_for_agent(issue) for issue in rnd["issues"] if issue["id"] in wanted]
    run_id = run_id_of(state)
    verifier = rnd.get("verifier") or {}
    task_id = f"{run_id}-r{rnd['iteration']}"
    retry_errors = list(verifier.get("errors") or [])
    lines = [
        f"fixloop run {run_id}: verify the {len(issues)} fixable finding(s) of review round "
        f"{rnd['iteration']} before they are fixed. Working directory: {state.get('project_dir')}",
        "",
        "For every issue id: check it against the code (accuracy_check: CORRECT, INCORRECT or "
        "PARTIALLY_CORRECT, with evidence; deletion_required for a wrong or harmful suggestion) and against "
        "the project's rules (rule_compliance_check). Then score the review as a whole (quality_assessment: "
        f"overall_score 0-100; below {QUALITY_PASS_SCORE} sends the review back to the reviewers) and list "
        "important issues the review missed (missing_issues).",
    ]
    if retry_errors:
        lines += ["", f"RETRY (attempt {verifier.get('dispatches', 1)}): the previous verification failed:"]
        lines += [f"- {item}" for item in retry_errors]
    lines += [
        "",
        "Issues:",
        json.dumps(issues, ensure_ascii=False, indent=1),
        "",
        "Answer with exactly one JSON object, the verifier contract (`fixloop schema verifier`): "
        f'{{"status": "success", "agent": "review-verifier", "task_id": "{task_id}", "verification_result": '
        '{"accuracy_check": [...], "rule_compliance_check": [...], "quality_assessment": {"overall_score", '
        '"quality_level": "EXCELLENT|GOOD|ACCEPTABLE|POOR", "strengths", "weaknesses", "missing_issues"}}}. '
        "Your final message is recorded as your result: output the JSON only.",
    ]
    return {
        "action": "verify_findings",
        "round": rnd["iteration"],
        "agent": f"fixloop:{VERIFIER_AGENT}",
        "task_id": task_id,
        "issues": issues,
        "prompt": "\n".join(lines),
        "next_command": f"fixloop review next {run_id}",
    }


def issue_for_agent(issue: Mapping[str, Any]) -> dict[str, Any]:
    keys = (
        "id",
        "file",
        "line",
        "end_line",
        "severity",
        "confidence",
        "category",
        "rule",
        "description",
        "suggestion",
        "existing_code",
        "improved_code",
        "auto_fixable",
        "agents",
    )
    return {key: issue.get(key) for key in keys if issue.get(key) is not None}


def apply_verifier(ctx: _Ctx, rnd: dict[str, Any]) -> dict[str, Any] | None:
    """Use the verifier's answer: delete findings, then re-review on QUALITY_TOO_LOW while retries last.

    A missing, invalid or failed answer is retried up to VERIFIER_MAX_DISPATCHES dispatches in all; after
    that the findings go on unfiltered (WARNING VERIFIER_UNAVAILABLE). Returns the next action, or None when
    the round's findings are final.
    """
    verifier = rnd["verifier"]
    number = int(rnd["iteration"])
    record = verifier.get("record")
    document = record.get("document") if record and record.get("valid") else None
    if document is None or document.get("status") != "success":
        if document is not None:
            problem = document.get("error") or {}
            code, message = (
                str(problem.get("code") or "UNKNOWN_ERROR"),
                str(problem.get("message") or "failed"),
            )
        elif record is not None:
            problem = record.get("error") or {}
            code = str(problem.get("code") or "SCHEMA_VIOLATION")
            message = str(problem.get("message") or "invalid result")
        else:
            code, message = "NULL_RESPONSE", f"Agent {VERIFIER_AGENT} returned nothing"
        ctx.emit(
            "E",
            "AGENT_FAILURE",
            iteration=number,
            agent=VERIFIER_AGENT,
            error_code=code,
            message=message,
            recoverable=verifier["dispatches"] < VERIFIER_MAX_DISPATCHES,
        )
        verifier["errors"].append(f"{code}: {message}")
        if verifier["dispatches"] < VERIFIER_MAX_DISPATCHES:
            verifier["dispatches"] += 1
            verifier["record"] = None
            verifier["requested_at_ms"] = ctx.now
            return verify_findings_action(ctx.state, rnd)
        verifier["done"] = True
        verifier["unavailable"] = True
        ctx.emit(
            "W",
            "WARNING",
            code="VERIFIER_UNAVAILABLE",
            message=f"The review verifier failed {verifier['dispatches']} times; round {number}'s findings "
            "are used unverified.",
            iteration=number,
        )
        return None

    result = document.get("verification_result") or {}
    doomed = issues_to_delete(result)
    known = {issue["id"] for issue in rnd["issues"]}
    unknown = sorted(set(doomed) - known)
    if unknown:
        ctx.emit(
            "W",
            "WARNING",
            code="VERIFIER_UNKNOWN_ISSUES",
            message=f"The verifier named issue ids this round does not have: {', '.join(unknown)}.",
            iteration=number,
        )
    removed = [issue["id"] for issue in rnd["issues"] if issue["id"] in doomed]
    quality = result.get("quality_assessment") or {}
    score = int(quality.get("overall_score", 0))
    level = str(quality.get("quality_level") or "")
    verifier.update(
        done=True,
        score=score,
        quality_level=level,
        missing_issues=list(quality.get("missing_issues") or []),
        weaknesses=list(quality.get("weaknesses") or []),
    )
    if score < QUALITY_PASS_SCORE:
        if rnd["quality_retries"] < ctx.config.max_quality_retries:
            return _quality_retry(ctx, rnd, score, level, quality, removed)
        ctx.emit(
            "W",
            "WARNING",
            code="QUALITY_RETRIES_EXHAUSTED",
            message=f"Review quality {score}/100 is below {QUALITY_PASS_SCORE} after "
            f"{rnd['quality_retries']} re-review(s); going on with the verified findings.",
            iteration=number,
        )
    rnd["removed_by_verifier"] = removed
    rnd["removed_details"] = {issue_id: doomed[issue_id] for issue_id in removed}
    rnd["removed_issues"] = [issue for issue in rnd["issues"] if issue["id"] in doomed]
    rnd["issues"] = [issue for issue in rnd["issues"] if issue["id"] not in doomed]
    rnd["issues_found"] = len(rnd["issues"])
    rnd["fixable"] = fixable_ids(rnd["issues"], ctx.config)
    return None


def issues_to_delete(result: Mapping[str, Any]) -> dict[str, str]:
    """Issue id -> reason, from a verification_result (mirrors VerifierOutput.issues_to_delete)."""
    doomed: dict[str, str] = {}
    for check in result.get("accuracy_check") or []:
        if check.get("deletion_required") or check.get("accuracy_status") == "INCORRECT":
            doomed[str(check["issue_id"])] = str(check.get("deletion_reason") or check.get("evidence") or "")
    for rule in result.get("rule_compliance_check") or []:
        if rule.get("deletion_required"):
            doomed.setdefault(
                str(rule["issue_id"]),
                str(rule.get("violation_reason") or "; ".join(rule.get("violated_rules") or [])),
            )
    return doomed


def _quality_retry(
    ctx: _Ctx,
    rnd: dict[str, Any],
    score: int,
    level: str,
    quality: Mapping[str, Any],
    removed: list[str],
) -> dict[str, Any]:
    weaknesses = [str(item) for item in quality.get("weaknesses") or []]
    error = f"{QUALITY_ERROR_CODE}: review quality score {score}/100" + (f" ({level})" if level else "")
    error += f" is below {QUALITY_PASS_SCORE}" + (
        f"; weaknesses: {'; '.join(weaknesses)}" if weaknesses else ""
    )
    previous = rnd.get("retry_context") or {
        "attempt_number": 1,
        "previous_errors": [],
        "recovery_actions_taken": [],
    }
    rnd["passes"].append(
        {
            "pass": rnd["pass"],
            "agents_results": rnd["agents_results"],
            "issues_found": rnd["issues_found"],
            "fixable_issues": len(rnd["fixable"]),
            "quality_score": score,
            "quality_level": level,
            "removed_by_verifier": removed,
        }
    )
    rnd["quality_retries"] += 1
    rnd["pass"] += 1
    rnd["retry_context"] = {
        "attempt_number": rnd["pass"],
        "previous_errors": [*previous["previous_errors"], error],
        "recovery_actions_taken": [
            *previous["recovery_actions_taken"],
            "re-review with stricter quality requirements",
        ],
    }
    rnd["missing_issues"] = [
        str(item.get("description"))
        for item in quality.get("missing_issues") or []
        if isinstance(item, Mapping)
    ]
    ctx.emit(
        "W",
        "WARNING",
        code=QUALITY_ERROR_CODE,
        message=f"{error}; re-review {rnd['quality_retries']}/{ctx.config.max_quality_retries}.",
        iteration=rnd["iteration"],
        score=score,
    )
    for key, value in (
        ("review_requested_at_ms", None),
        ("records", {}),
        ("closed", False),
        ("closed_at_ms", None),
        ("agents_results", []),
        ("issues", []),
        ("issues_found", 0),
        ("fixable", []),
        ("positive_observations", []),
        ("verifier", None),
    ):
        rnd[key] = value
    return _request_review(ctx, rnd)


# ---- tracking and convergence --------------------------------------------------------------------


def _previous_round(review: Mapping[str, Any], rnd: Mapping[str, Any]) -> dict[str, Any] | None:
    rounds = review["rounds"]
    index = next(i for i, item in enumerate(rounds) if item["iteration"] == rnd["iteration"])
    previous: dict[str, Any] | None = rounds[index - 1] if index > 0 else None
    return previous


def _track(ctx: _Ctx, rnd: dict[str, Any]) -> None:
    """resolved/introduced/persisting against the previous round, then the design's convergence rules."""
    rnd["tracked"] = True
    review = ctx.review
    current = len(rnd["fixable"])
    review["trend"] = [*review["trend"], current]
    previous = _previous_round(review, rnd)
    if previous is None:
        return
    before = {issue["id"] for issue in previous["issues"]}
    now = {issue["id"] for issue in rnd["issues"]}
    rnd["resolved_issues"] = _sorted_ids(before - now)
    rnd["introduced_issues"] = _sorted_ids(now - before)
    rnd["persisting_issues"] = _sorted_ids(before & now)
    previous_count = len(previous["fixable"])
    number = int(rnd["iteration"])
    if current > previous_count:
        rnd["convergence"] = "diverged"
        ctx.emit(
            "W",
            "REVIEW_CONVERGENCE",
            decision="diverged",
            iteration=number,
            previous_count=previous_count,
            current_count=current,
            introduced_issues=rnd["introduced_issues"],
        )
    elif current == previous_count:
        review["consecutive_no_improvement"] += 1
        if review["consecutive_no_improvement"] >= 2:
            rnd["convergence"] = "converged"
            ctx.emit(
                "X",
                "REVIEW_CONVERGENCE",
                decision="converged",
                iteration=number,
                issues_trend=list(review["trend"]),
                reason="fixable issue count unchanged for 2 consecutive iterations",
            )
    else:
        review["consecutive_no_improvement"] = 0


# ---- fixing --------------------------------------------------------------------------------------


def _request_fix(ctx: _Ctx, rnd: dict[str, Any]) -> dict[str, Any]:
    number = int(rnd["iteration"])
    fixable = set(rnd["fixable"])
    issue_files = {issue["file"] for issue in rnd["issues"] if issue["id"] in fixable}
    snapshot: dict[str, Any] | None = None
    if ctx.effects is not None:
        snapshot = ctx.effects.take_snapshot(number, sorted(issue_files | set(review_scope(ctx.state))))
    rnd["fix"] = {
        "requested_at_ms": ctx.now,
        "issue_ids": list(rnd["fixable"]),
        "snapshot": snapshot,
        "record": None,
        "done": False,
        "result": None,
        "results": [],
        "files_claimed": [],
        "files_changed": None,
        "files_modified": [],
        "duration_ms": None,
        "error": None,
    }
    ctx.emit("I", "REVIEW_FIX_ITERATION", iteration=number, direction="start", fixable_issues=len(fixable))
    return fix_action(ctx.state, rnd)


def fix_action(state: Mapping[str, Any], rnd: Mapping[str, Any]) -> dict[str, Any]:
    ids = set(rnd["fix"]["issue_ids"])
    issues = [issue_for_agent(issue) for issue in rnd["issues"] if issue["id"] in ids]
    run_id = run_id_of(state)
    lines = [
        f"fixloop run {run_id}: fix the {len(issues)} issue(s) of review round {rnd['iteration']}. "
        f"Working directory: {state.get('project_dir')}",
        "",
        "Rules: change only what each issue needs; do not touch unrelated code or files; do not commit, "
        "stash, reset or check out anything (fixloop snapshots the files and can roll your changes "
        "back); skip an issue rather than guess.",
        "",
        "Issues:",
        json.dumps(issues, ensure_ascii=False, indent=1),
        "",
        "Answer with exactly one JSON object, the fixer contract (`fixloop schema fixer`): "
        '{"status": "success|partial|failed", "agent": "review-fixer", "results": [{"issue_id", '
        '"status": "succeeded|failed|skipped", "reason" (required unless succeeded), "files": [...]}], '
        '"files_modified": [...]}. Your final message is recorded as your result: output the JSON only.',
    ]
    return {
        "action": "fix",
        "round": rnd["iteration"],
        "agent": f"fixloop:{FIXER_AGENT}",
        "issues": issues,
        "prompt": "\n".join(lines),
        "snapshot": (rnd["fix"].get("snapshot") or {}).get("dir"),
        "next_command": f"fixloop review next {run_id}",
    }


def _close_fix(ctx: _Ctx, rnd: dict[str, Any]) -> None:
    fix = rnd["fix"]
    number = int(rnd["iteration"])
    record = fix.get("record")
    document = record.get("document") if record and record.get("valid") else None
    results: list[dict[str, Any]] = list(document.get("results") or []) if document else []
    attempted = [item for item in results if item.get("status") != "skipped"]
    succeeded = [item for item in attempted if item.get("status") == "succeeded"]
    counts = {
        "attempted": len(attempted),
        "succeeded": len(succeeded),
        "failed": len(attempted) - len(succeeded),
    }
    if document is None or document.get("status") == "failed":
        if document is not None:
            problem = document.get("error") or {}
            code = str(problem.get("code") or "FIX_FAILED")
            message = str(problem.get("message") or "the fixer reported failure")
        elif record is not None:
            problem = record.get("error") or {}
            code, message = str(problem.get("code") or "SCHEMA_VIOLATION"), str(problem.get("message") or "")
        else:
            code, message = "NULL_RESPONSE", f"Agent {FIXER_AGENT} returned nothing"
        fix["error"] = {"code": code, "message": message}
        ctx.emit(
            "E",
            "AGENT_FAILURE",
            iteration=number,
            agent=FIXER_AGENT,
            error_code=code,
            message=message,
            recoverable=False,
        )
    claimed: set[str] = set(document.get("files_modified") or []) if document else set()
    for item in results:
        claimed.update(item.get("files") or [])
    changed: list[str] | None = None
    if ctx.effects is not None and fix.get("snapshot"):
        try:
            changed = ctx.effects.changed_since(fix["snapshot"])
        except FixloopError as failure:
            ctx.emit(
                "W",
                "WARNING",
                code=failure.code,
                message=f"Cannot compare with round {number}'s snapshot ({failure.message}); "
                "using the files the fixer reported.",
                iteration=number,
            )
    fix.update(
        done=True,
        result=counts,
        results=results,
        files_claimed=sorted(claimed),
        files_changed=changed,
        files_modified=sorted(changed) if changed is not None else sorted(claimed),
        duration_ms=max(0, ctx.now - int(fix["requested_at_ms"])),
    )
    ctx.emit(
        "I",
        "REVIEW_FIX_ITERATION",
        iteration=number,
        direction="end",
        attempted=counts["attempted"],
        succeeded=counts["succeeded"],
        failed=counts["failed"],
        remaining=max(0, len(fix["issue_ids"]) - counts["succeeded"]),
        duration_ms=fix["duration_ms"],
    )


# ---- questions -----------------------------------------------------------------------------------


def _ask(ctx: _Ctx, context: str, number: int, verification: Mapping[str, Any] | None) -> dict[str, Any]:
    question = ctx.review.get("question")
    if not question or question.get("context") != context or question.get("round") != number:
        options = list(CHOICE_DESCRIPTIONS[context])
        if context == "initial_verification_failed":
            text = (
                f"Verification failed before the review: {failed_steps_text(verification)}. "
                "How should the review go on?"
            )
        elif context == "review_verification_failed":
            text = (
                f"Verification failed after the fixes of review round {number}: "
                f"{failed_steps_text(verification)}. What now?"
            )
        else:
            rnd = current_round(ctx.review) or {}
            previous = _previous_round(ctx.review, rnd) or {}
            text = (
                "The review-fix loop diverged: fixable issues went from "
                f"{len(previous.get('fixable') or [])} to {len(rnd.get('fixable') or [])} "
                f"after the fixes of round {previous.get('iteration')} "
                f"(introduced: {', '.join(rnd.get('introduced_issues') or []) or 'none'}). "
                "Roll those fixes back, or keep them?"
            )
        question = {
            "context": context,
            "round": number,
            "question": text,
            "options": options,
            "default": default_choice(context, ctx.config),
            "asked_at_ms": ctx.now,
        }
        ctx.review["question"] = question
        ctx.emit("X", "USER_INTERACTION", context=context, question=text, iteration=number)
    return ask_action(ctx.state, question)


def ask_action(state: Mapping[str, Any], question: Mapping[str, Any]) -> dict[str, Any]:
    run_id = run_id_of(state)
    descriptions = CHOICE_DESCRIPTIONS[str(question["context"])]
    return {
        "action": "ask_user",
        "round": question["round"],
        "context": question["context"],
        "question": question["question"],
        "options": [{"label": label, "description": descriptions[label]} for label in question["options"]],
        "default": question["default"],
        "choose_command": f"fixloop review choose {run_id} <label>",
        "default_command": f"fixloop review choose {run_id} --default",
    }


def default_choice(context: str, config: LoopConfig) -> str:
    configured = config.on_verification_failure
    if context == "initial_verification_failed":
        return "manual" if configured == "rollback" else configured
    if context == "review_diverged":
        return "rollback" if configured == "rollback" else "manual"
    return configured


def choose(
    state: dict[str, Any],
    choice: str | None,
    default: bool = False,
    effects: Effects | None = None,
    now_ms: int | None = None,
    inplace: bool = False,
) -> Transition:
    """Answer the pending question. `default` applies config.on_verification_failure (see default_choice).

    rollback restores the files the fixer changed in the round it undoes (through `effects`).
    """
    work = state if inplace else _clone(state)
    ctx = _Ctx(work, effects, now_ms)
    review = ctx.review
    question = review.get("question")
    if not question:
        raise FixloopError(
            "NO_PENDING_QUESTION",
            "The review is not waiting for a choice.",
            suggestion=f"Run `fixloop review next {ctx.run_id}` to see the next action.",
        )
    context = str(question["context"])
    expected = str(question["default"])
    if default:
        if choice is not None and choice != expected:
            raise FixloopError(
                "INVALID_CHOICE",
                f"--default chooses {expected!r} here, not {choice!r}.",
                valid_values=list(question["options"]),
                received=choice,
                default=expected,
            )
        choice = expected
    if choice is None:
        raise FixloopError(
            "MISSING_CHOICE", "Give a choice or --default.", valid_values=list(question["options"])
        )
    effective = choice
    if context == "initial_verification_failed" and choice == "rollback":
        effective = "manual"  # nothing to roll back before any fix
    if effective not in question["options"]:
        raise FixloopError(
            "INVALID_CHOICE",
            f"Invalid choice {choice!r} for this question.",
            valid_values=list(question["options"]),
            received=choice,
        )
    number = int(question["round"])
    restored: list[str] = []
    if context == "initial_verification_failed":
        review["gate"]["choice"] = effective
    else:
        rnd = _round_by_number(review, number)
        if context == "review_verification_failed":
            rnd["choice"] = effective
            target: dict[str, Any] | None = rnd
        else:
            rnd["divergence_choice"] = effective
            target = _previous_round(review, rnd)
        if effective == "rollback" and target is not None:
            restored = _rollback(ctx, target)
    wait = max(0, ctx.now - int(question.get("asked_at_ms") or ctx.now))
    review["interactions"].append(
        {
            "context": context,
            "round": number,
            "question": question["question"],
            "choice": effective,
            "default": default,
            "asked_at_ms": question.get("asked_at_ms"),
            "answered_at_ms": ctx.now,
        }
    )
    review["question"] = None
    ctx.emit(
        "X",
        "USER_INTERACTION",
        context=context,
        user_response=effective,
        wait_duration_ms=wait,
        default=default,
        iteration=number,
    )
    answer = {
        "status": "chosen",
        "choice": effective,
        "default": default,
        "context": context,
        "round": number,
        "restored_files": restored,
        "next_command": f"fixloop review next {ctx.run_id}",
    }
    return Transition(work, ctx.events, answer)


def _round_by_number(review: Mapping[str, Any], number: int) -> dict[str, Any]:
    for rnd in review["rounds"]:
        if rnd["iteration"] == number:
            found: dict[str, Any] = rnd
            return found
    raise FixloopError("STATE_INVALID", f"The review has no round {number}.")


def _rollback(ctx: _Ctx, rnd: dict[str, Any]) -> list[str]:
    fix = rnd.get("fix") or {}
    snapshot = fix.get("snapshot")
    restored: list[str] = []
    if snapshot and ctx.effects is not None:
        restored = ctx.effects.rollback(snapshot)
    else:
        ctx.emit(
            "W",
            "WARNING",
            code="NO_SNAPSHOT",
            message=f"Round {rnd['iteration']} has no snapshot to roll back to; nothing was restored.",
            iteration=rnd["iteration"],
        )
    rnd["rolled_back"] = True
    rnd["rollback_files"] = restored
    return restored


# ---- the end -------------------------------------------------------------------------------------


def _fail(ctx: _Ctx, error: dict[str, Any]) -> dict[str, Any]:
    review = ctx.review
    rnd = current_round(review)
    review["outcome"] = {
        "status": "failed",
        "termination_reason": None,
        "error": error,
        "round": rnd["iteration"] if rnd else 0,
        "at_ms": ctx.now,
    }
    review["ended_at_ms"] = ctx.now
    state = ctx.state
    state["status"] = "failed"
    errors = state.get("errors")
    if not isinstance(errors, list):
        errors = []
    errors.append({"ts": utc_timestamp_ms(ctx.now / 1000), "action": "review", "message": error["message"]})
    state["errors"] = errors
    count = state.get("error_count")
    state["error_count"] = (count if isinstance(count, int) and not isinstance(count, bool) else 0) + 1
    ctx.emit("E", "ERROR", code=error["code"], message=error["message"])
    _complete_event(ctx)
    return _terminal_action(ctx)


def _finish(ctx: _Ctx, reason: str | None) -> dict[str, Any]:
    """End the loop; `reason` None is the end of a dry run (the coordinator patterns' dry_run_complete)."""
    review = ctx.review
    rnd = current_round(review)
    status = "dry_run_complete" if reason is None else TERMINATION_STATUS[reason]
    if status == "success" and summary(review)["final_issues"] > 0:
        status = "partial"  # the design's partial: the loop finished with issues left for a person
    review["outcome"] = {
        "status": status,
        "termination_reason": reason,
        "error": None,
        "round": rnd["iteration"] if rnd else 0,
        "at_ms": ctx.now,
    }
    review["ended_at_ms"] = ctx.now
    _complete_event(ctx)
    return _terminal_action(ctx)


def _complete_event(ctx: _Ctx) -> None:
    numbers = summary(ctx.review)
    ctx.emit(
        "I",
        "REVIEW_COMPLETE",
        total_iterations=numbers["total_iterations"],
        initial_issues=numbers["initial_issues"],
        final_issues=numbers["final_issues"],
        fixed_issues=numbers["fixed_issues"],
        termination_reason=numbers["termination_reason"],
        total_duration_ms=max(0, ctx.now - int(ctx.review["started_at_ms"])),
    )


def _terminal_action(ctx: _Ctx) -> dict[str, Any]:
    outcome = ctx.review["outcome"]
    report = f"fixloop review report {ctx.run_id}"
    if outcome["status"] == "failed":
        return {
            "action": "failed",
            "round": outcome["round"],
            "error": outcome["error"],
            "report_command": report,
        }
    return {
        "action": "stop",
        "round": outcome["round"],
        "termination_reason": outcome["termination_reason"],
        "status": outcome["status"],
        "summary": summary(ctx.review),
        "report_command": report,
    }


# ---- views used by reports -----------------------------------------------------------------------


def closed_rounds(review: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [rnd for rnd in review.get("rounds") or [] if rnd.get("closed")]


def final_round(review: Mapping[str, Any]) -> dict[str, Any] | None:
    """The round whose findings describe the code as it is now.

    Normally the last closed round. When a round's fix was rolled back, the code is back to what that
    round reviewed, so that round is final and later rounds are history.
    """
    closed = closed_rounds(review)
    for rnd in closed:
        if rnd.get("rolled_back"):
            return rnd
    return closed[-1] if closed else None


def kept_rounds(review: Mapping[str, Any]) -> list[dict[str, Any]]:
    final = final_round(review)
    if final is None:
        return []
    return [rnd for rnd in closed_rounds(review) if rnd["iteration"] <= final["iteration"]]


def fixed_issue_ids(review: Mapping[str, Any]) -> list[str]:
    kept = kept_rounds(review)
    if len(kept) < 2:
        return []
    final_ids = {issue["id"] for issue in kept[-1]["issues"]}
    seen = {issue["id"] for rnd in kept[:-1] for issue in rnd["issues"]}
    return _sorted_ids(seen - final_ids)


def introduced_issue_ids(review: Mapping[str, Any]) -> list[str]:
    kept = kept_rounds(review)
    if len(kept) < 2:
        return []
    final_ids = {issue["id"] for issue in kept[-1]["issues"]}
    introduced = {issue_id for rnd in kept[1:] for issue_id in rnd.get("introduced_issues") or []}
    return _sorted_ids(introduced & final_ids)


def summary(review: Mapping[str, Any]) -> dict[str, Any]:
    closed = closed_rounds(review)
    final = final_round(review)
    outcome = review.get("outcome") or {}
    return {
        "total_iterations": len(closed),
        "initial_issues": int(closed[0]["issues_found"]) if closed else 0,
        "final_issues": len(final["issues"]) if final else 0,
        "fixed_issues": len(fixed_issue_ids(review)),
        "termination_reason": outcome.get("termination_reason"),
    }


def files_modified(review: Mapping[str, Any]) -> list[str]:
    files: set[str] = set()
    for rnd in review.get("rounds") or []:
        fix = rnd.get("fix")
        if fix and fix.get("done") and not rnd.get("rolled_back"):
            files.update(fix.get("files_modified") or [])
    return sorted(files)


def status_document(state: dict[str, Any]) -> dict[str, Any]:
    """`fixloop review status`: where the loop stands, without advancing it."""
    review = state.get("review")
    if not isinstance(review, dict) or review.get("version") != STATE_VERSION:
        return {
            "run_id": run_id_of(state),
            "started": False,
            "changed_files": len(state.get("changed_files") or []),
        }
    rnd = current_round(review)
    outcome = review.get("outcome")
    current: dict[str, Any] | None = None
    if rnd is not None:
        records = rnd.get("records") or {}
        current = {
            "iteration": rnd["iteration"],
            "pass": rnd["pass"],
            "review_requested": rnd["review_requested_at_ms"] is not None,
            "closed": rnd["closed"],
            "recorded": {
                agent: {"valid": record["valid"], "attempts": record["attempts"]}
                for agent, record in sorted(records.items())
            },
            "missing": [agent for agent in REVIEWER_AGENTS if agent not in records]
            if rnd["review_requested_at_ms"] is not None and not rnd["closed"]
            else [],
            "issues_found": rnd["issues_found"],
            "fixable_issues": len(rnd["fixable"]),
            "verifier": None
            if rnd.get("verifier") is None
            else {
                "done": rnd["verifier"]["done"],
                "dispatches": rnd["verifier"]["dispatches"],
                "score": rnd["verifier"].get("score"),
            },
            "fix": None
            if rnd.get("fix") is None
            else {
                "done": rnd["fix"]["done"],
                "result": rnd["fix"]["result"],
                "issue_ids": rnd["fix"]["issue_ids"],
            },
            "verification_passed": rnd.get("verification_passed"),
        }
    return {
        "run_id": run_id_of(state),
        "started": True,
        "finished": bool(outcome),
        "status": (outcome or {}).get("status", "running"),
        "termination_reason": (outcome or {}).get("termination_reason"),
        "error": (outcome or {}).get("error"),
        "last_action": review.get("last_action"),
        "initial_verification_passed": review["gate"]["passed"],
        "question": review.get("question"),
        "fixes_done": fixes_done(review),
        "trend": review.get("trend"),
        "round": current,
        "summary": summary(review),
    }
