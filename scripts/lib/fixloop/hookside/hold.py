"""The model that carries a run may not end it: the coordinator's SubagentStop and the main thread's Stop.

When the coordinator (or the main thread of the session the run is bound to) is about to stop:
- the run still needs agents: the engine is told the model stopped (`fixloop next RUN --text --stopped`),
  and the model is sent back with the step the engine gives (the engine counts these stops and, past its
  bound, ends the run itself: workflows.early_stop);
- the run waits for the user, or has ended: the model's last message must hold the text the engine gave
  (the question, or the final message); if it does not, the model is sent back once with that text.
At most MAX_HOLDS blocks per agent (or per main thread) and run, whatever the engine says: a hook never
keeps a session going without end.
"""

from __future__ import annotations

from fixloop.core import jsoncodec
from fixloop.store import ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fixloop.hookside.context import RunContext

MAX_HOLDS = 8
HOLDS = "holds"  # hooks-state.json: blocks per agent id ("main" for the main thread)
FINAL_MARK = "your final message is exactly:"
NOT_OVER = (
    "fixloop: run {run} is not over, and only the engine ends it. Carry out this step now (your own "
    "summary is not the run's end):\n\n{step}"
)


def _words(text: str) -> str:
    return " ".join(text.split())


def said(message: str, expected: str) -> bool:
    """Whether `message` holds `expected`, whitespace aside."""
    wanted = _words(expected)
    return bool(wanted) and wanted in _words(message)


def final_text(step: str) -> str | None:
    """The exact text an "End now" step gives as the final message; None for a step with agents to call."""
    head, _, rest = step.partition(FINAL_MARK)
    if "End now" not in head or not rest:
        return None
    return rest[1:] if rest[:1] in ("\n", " ") else rest


def _take_hold(context: RunContext, holder: str) -> bool:
    """Count one block for `holder`; False when it had MAX_HOLDS already."""
    taken: list[bool] = []

    def count(state: dict[str, object]) -> None:
        holds = state.get(HOLDS)
        if not isinstance(holds, dict):
            holds = state[HOLDS] = {}
        done = holds.get(holder)
        done = done if isinstance(done, int) and not isinstance(done, bool) else 0
        if done < MAX_HOLDS:
            holds[holder] = done + 1
            taken.append(True)

    ledger.update_hooks_state(context.run_dir, count)
    return bool(taken)


def _block(reason: str) -> str:
    return jsoncodec.dumps({"decision": "block", "reason": reason}, ensure_ascii=False) + "\n"


def hold(context: RunContext, holder: str, message: str, hook: str) -> str | None:
    """The block decision that sends the model back, or None to let it stop."""
    view = context.view
    if not view.running:
        final = view.final_message
        if final is None or said(message, final):
            return None
        step = f"fixloop next (run {view.run_id}): the run has ended. End now; {FINAL_MARK}\n{final}"
        return _block(step) if _take_hold(context, holder) else None
    if view.dispatch is None and not view.asking:
        return None  # the engine never handed this run a step: it is driven by hand, not by this model
    from fixloop.hookside import engine

    try:
        step = engine.next_text(context, stopped=not view.asking)
    except engine.EngineUnavailable as error:
        context.warn(
            "NEXT_STEP_FAILED",
            f"The engine gave no next step for run {context.run_id} when {holder} stopped: {error}"[:500],
            hook=hook,
            impact="the run stays as it is; the next fixloop command of this session reports it",
        )
        return None
    expected = final_text(step)
    if expected is not None and said(message, expected):
        return None
    if not _take_hold(context, holder):
        context.warn(
            "HOLD_CAP",
            f"{holder} stopped {MAX_HOLDS + 1} times with run {context.run_id} unfinished; the hook lets it.",
            hook=hook,
        )
        return None
    reason = step if expected is not None else NOT_OVER.format(run=context.run_id, step=step)
    return _block(reason)
