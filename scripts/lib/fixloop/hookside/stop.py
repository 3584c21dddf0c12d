"""SubagentStop: hold every fixloop agent but the coordinator to its output contract.

For a fixloop subagent of a session with a running run:
1. appends a `stop` line to the ledger (agent_id, sha256 of the final message);
2. for any agent but the coordinator, records the final message into the run with the engine
   (`fixloop record`, hookside.engine):
   - valid: the result is in the run; the agent stops, unless the engine sends it on (`continue`): then
     answers {"decision":"block","reason": that instruction}, at most MAX_CONTINUES times per agent_id;
   - invalid and the engine allows a retry: answers {"decision":"block","reason":...} quoting the
     violations, so the agent answers again; at most MAX_BLOCKS times per agent_id, whatever the engine
     says (counted from the ledger's stop lines, less the stops that went on after a `continue`);
   - invalid without retry: the agent stops (the engine has logged CONTRACT_VIOLATION);
   - engine unavailable, timed out or refusing (UNEXPECTED_AGENT_RESULT: nothing waits for the agent):
     the agent stops, and a WARNING is logged;
3. stores the verdict (hooks-state.json "verdicts", per agent_id) that the call's AGENT_RESULT and the
   caller's one line report: validity, and the agent's status and issue count from the engine's answer
   (the coordinator's status from its own answer); "continues" counts the `continue` blocks per agent_id;
4. appends a `usage` line with the tokens of all the agent's model turns, read from its transcript
   (hookside.transcript_usage; the Agent tool result reports only the last turn's), or a WARNING;
5. closes a background call (AGENT_RESULT, reviewer group) once the agent really stops;
6. for the coordinator: sends it back while its run is unfinished, or when it ends without the text the
   engine gave (hookside.hold).
"""

from __future__ import annotations

import os

from fixloop.core import agent_names, jsoncodec
from fixloop.hookside import payload as payloads
from fixloop.hookside.context import now_ms
from fixloop.store import ledger

# The stop of every fixloop subagent runs this module; only the contracted agents need the engine (and
# subprocess). The rest stays as light as the every-call hooks.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fixloop.hookside.context import RunContext

MAX_BLOCKS = 2
MAX_CONTINUES = 4


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    return jsoncodec.dumps(value, ensure_ascii=False)


def violation_lines(error: object) -> list[str]:
    """The violations of an invalid answer, quoted as the engine reported them, one per line."""
    if not isinstance(error, dict):
        return [f"- {_text(error)}"] if error else []
    lines: list[str] = []
    code, message = error.get("code"), error.get("message")
    if code or message:
        lines.append(f"- {code or 'ERROR'}: {_text(message) if message is not None else ''}".rstrip(": "))
    violations = error.get("violations")
    if isinstance(violations, list):
        for item in violations:
            if isinstance(item, dict) and "message" in item:
                where = item.get("path") or item.get("loc") or item.get("field")
                text = _text(item["message"])
                lines.append(f"- {_text(where)}: {text}" if where else f"- {text}")
            else:
                lines.append(f"- {_text(item)}")
    missing = error.get("missing_fields")
    if isinstance(missing, list) and missing:
        lines.append("- missing fields: " + ", ".join(_text(item) for item in missing))
    parse_error = error.get("parse_error")
    if parse_error and _text(parse_error) not in _text(message):
        lines.append(f"- JSON parse error: {_text(parse_error)}")
    return lines


def block_reason(agent: str, answer: Mapping[str, Any], attempt: int) -> str:
    lines = [
        f"fixloop rejected your final answer (attempt {attempt} of {MAX_BLOCKS + 1}): it does not satisfy "
        f"the output contract of fixloop:{agent}.",
        "Violations:",
        *(violation_lines(answer.get("error")) or ["- (the engine gave no details)"]),
    ]
    hint = answer.get("hint")
    if isinstance(hint, str) and hint.strip():
        lines.append(hint.strip())
    lines.append(
        "Answer again with only the corrected JSON document and nothing else. Keep every field that was "
        "already right and fix exactly the violations above."
    )
    return "\n".join(lines)


def _continues(context: RunContext, agent_id: str) -> int:
    """How many times the agent was already sent on after a valid answer (`continue` blocks)."""
    counts = ledger.read_hooks_state(context.run_dir).get("continues")
    count = counts.get(agent_id) if isinstance(counts, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def _store_verdict(context: RunContext, agent_id: str, verdict: dict[str, Any], went_on: bool) -> None:
    def put(state: dict[str, Any]) -> None:
        verdicts = state.get("verdicts")
        if not isinstance(verdicts, dict):
            verdicts = state["verdicts"] = {}
        verdicts[agent_id] = verdict
        if went_on:
            counts = state.get("continues")
            if not isinstance(counts, dict):
                counts = state["continues"] = {}
            count = counts.get(agent_id)
            counts[agent_id] = (count if isinstance(count, int) else 0) + 1

    ledger.update_hooks_state(context.run_dir, put)


def subagent_stop(payload: dict[str, Any], context: RunContext) -> str | None:
    agent = payloads.subagent_of(payload)
    if agent is None:
        return None
    agent_id = payload.get("agent_id")
    agent_id = agent_id if isinstance(agent_id, str) and agent_id else None
    text = payload.get("last_assistant_message")
    text = text if isinstance(text, str) else ""
    message = ledger.message_bytes(text)
    records = ledger.read(context.run_dir)
    earlier_stops = len(ledger.stops_of(records, agent_id))
    stop = ledger.append(
        context.run_dir,
        {
            "kind": "stop",
            "ts_ms": now_ms(),
            "agent_type": payload.get("agent_type"),
            "agent": agent,
            "agent_id": agent_id,
            "message_sha256": ledger.message_sha256(message),
            "stop_hook_active": payload.get("stop_hook_active") is True,
            "attempt": earlier_stops + 1,
        },
    )
    contracted = agent != agent_names.COORDINATOR_AGENT
    verdict: dict[str, Any] = {
        "valid": None,
        "final": True,
        "error": None,
        "status": None if contracted else payloads.report_status(text),
        "issues": None,
    }
    output: str | None = None
    went_on = False
    if contracted and agent_id is not None:
        continues = _continues(context, agent_id)
        output, instruction = _enforce(context, agent, agent_id, message, earlier_stops - continues, verdict)
        if output is None and instruction is not None:
            output = _go_on(context, agent, agent_id, continues, instruction, verdict)
            went_on = output is not None
    if agent_id is not None:
        _store_verdict(context, agent_id, verdict, went_on)
    _record_transcript_usage(context, payload, agent, agent_id, text)
    if not contracted:
        from fixloop.hookside import hold  # the coordinator may not end its run: hookside.hold

        output = hold.hold(context, agent_id or agent, text, "SubagentStop")
    if output is None:
        launch = ledger.find_launch(records, agent_id)
        if launch is not None:
            from fixloop.hookside import calls

            calls.close_background(context, stop, launch.get("tool_use_id"), None)
    return output


def _record_transcript_usage(
    context: RunContext, payload: Mapping[str, Any], agent: str, agent_id: str | None, final_text: str
) -> None:
    """A `usage` ledger line with the tokens of all the agent's model turns, read from its transcript once
    it holds the final message (or after waiting a few seconds for it). Its Agent tool result reports the
    last turn only (and the coordinator's none). Every stop of an agent writes one; the last is the whole.
    `complete`: the whole transcript was read and held the final message. Without a transcript there is no
    line (the run's usage then says which agents count their last turn only); a transcript that is there but
    could not be read whole is a WARNING too. The hook goes on all the same."""
    path = payload.get("agent_transcript_path")
    if not isinstance(path, str) or not path:
        return
    try:
        from fixloop.hookside.transcript_usage import transcript_usage, wait_for_final

        final_seen = wait_for_final(path, final_text)
        spent = transcript_usage(path)
        if spent is None:
            if not os.path.exists(path):
                return
            problem = "it holds no readable model response"
        else:
            spent["complete"] = spent["complete"] is True and final_seen
            ledger.append(
                context.run_dir,
                {"kind": "usage", "ts_ms": now_ms(), "agent": agent, "agent_id": agent_id, **spent},
            )
            if spent["complete"]:
                return
            problem = (
                "its final message did not reach it in time"
                if not final_seen
                else "it is longer than the hook reads"
            )
    except Exception as error:  # never let the count of tokens cost the agent its contract check
        problem = f"{type(error).__name__}: {error}"
    context.warn(
        "TRANSCRIPT_USAGE_INCOMPLETE",
        f"The tokens of {agent} ({agent_id}) were not all read from its transcript: {problem}."[:500],
        agent=agent,
        agent_id=agent_id,
        transcript_path=path,
        impact=(
            "the run's usage counts only this agent's last model turn (its Agent tool result's usage)"
            if agent != agent_names.COORDINATOR_AGENT
            else "the run's usage has only part of the coordinator's tokens, or none"
        ),
    )


def _go_on(
    context: RunContext, agent: str, agent_id: str, continues: int, instruction: str, verdict: dict[str, Any]
) -> str | None:
    """The block that sends the agent on with the engine's `continue` instruction, unless it was sent on
    MAX_CONTINUES times already."""
    if continues >= MAX_CONTINUES:
        context.warn(
            "CONTINUE_CAP",
            f"{agent} ({agent_id}) was sent on {continues} times; the hook lets it stop although the "
            f"engine asked it to go on: {instruction.strip()}"[:500],
            agent=agent,
            agent_id=agent_id,
        )
        return None
    verdict.update(final=False)
    return jsoncodec.dumps({"decision": "block", "reason": instruction}, ensure_ascii=False) + "\n"


def _enforce(
    context: RunContext,
    agent: str,
    agent_id: str,
    message: bytes,
    earlier_stops: int,
    verdict: dict[str, Any],
) -> tuple[str | None, str | None]:
    """Record the answer and fill `verdict`; return the block decision to print (None to let it stop) and
    the engine's `continue` instruction, if any. `earlier_stops` counts the earlier invalid answers."""
    from fixloop.hookside import engine

    try:
        answer = engine.record(context, agent, agent_id, message)
    except engine.EngineUnavailable as error:
        context.warn(
            "ENGINE_UNAVAILABLE",
            f"The result of {agent} ({agent_id}) was not recorded: {error}",
            agent=agent,
            agent_id=agent_id,
            impact="the coordinator sees no result for this agent; its contract was not checked",
        )
        verdict.update(error="ENGINE_UNAVAILABLE")
        return None, None
    if answer.get("status") != "recorded":
        code = engine.error_code(answer) or "RECORD_FAILED"
        problem = answer.get("error")
        detail = problem.get("message") if isinstance(problem, dict) else None
        context.warn(
            "RECORD_REFUSED",
            f"The engine refused the result of {agent} ({agent_id}): {code}: {detail or 'no details'}",
            agent=agent,
            agent_id=agent_id,
            error_code=code,
        )
        verdict.update(valid=None, error=code)
        return None, None
    go_on = answer.get("continue")
    instruction = go_on if isinstance(go_on, str) and go_on.strip() else None
    if answer.get("valid") is True:
        verdict.update(valid=True, status=engine.agent_status(answer), issues=engine.issues_count(answer))
        return None, instruction
    verdict.update(valid=False, error=engine.error_code(answer) or "CONTRACT_VIOLATION")
    if answer.get("retry") is not True:
        return None, instruction
    if earlier_stops >= MAX_BLOCKS:
        context.warn(
            "CONTRACT_RETRY_CAP",
            f"{agent} ({agent_id}) answered invalidly {earlier_stops + 1} times; the hook stops asking "
            f"after {MAX_BLOCKS} retries although the engine allowed another.",
            agent=agent,
            agent_id=agent_id,
        )
        return None, instruction
    verdict.update(final=False)
    attempt = answer.get("attempt")
    shown = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else earlier_stops + 1
    decision = {"decision": "block", "reason": block_reason(agent, answer, shown)}
    return jsoncodec.dumps(decision, ensure_ascii=False) + "\n", None


def relevant(payload: dict[str, Any]) -> bool:
    return payloads.subagent_of(payload) is not None


def is_main_stop(payload: dict[str, Any]) -> bool:
    return payload.get("hook_event_name") == "Stop"


def main_stop(payload: dict[str, Any], context: RunContext) -> str | None:
    """Stop of the main thread of the session the run is bound to: held like the coordinator while the run
    needs agents and none of its agents is still at work (a background agent reports later)."""
    view = context.view
    if not view.running or view.asking or _agents_at_work(ledger.read(context.run_dir)):
        return None
    from fixloop.hookside import hold

    text = payload.get("last_assistant_message")
    return hold.hold(context, "main", text if isinstance(text, str) else "", "Stop")


def _agents_at_work(records: list[dict[str, Any]]) -> bool:
    """Whether a fixloop subagent (the coordinator included) started and has not stopped for good."""
    running: set[object] = set()
    for record in records:
        if record.get("kind") == "start":
            running.add(record.get("agent_id"))
        elif record.get("kind") == "stop":
            running.discard(record.get("agent_id"))
    return bool(running)


def handle(payload: dict[str, Any], context: RunContext) -> str | None:
    if payload.get("hook_event_name") not in (None, "SubagentStop"):
        return None
    return subagent_stop(payload, context)
