"""The review coordinator's loop: `decide_next` advances it as far as the recorded results allow.

The answer's `action` is one of review | verify_findings | fix | verify | ask_user | stop | failed. Each
step module holds its own rules (rounds, verifier, convergence, fix, questions, gate, outcome); review/step.py
describes what a step takes and returns.
"""

from __future__ import annotations

from fixloop.review.access import current_round
from fixloop.review.convergence import track
from fixloop.review.fix import close_fix, request_fix
from fixloop.review.gate import failed_steps_text, verify_action
from fixloop.review.outcome import finish, terminal_action
from fixloop.review.questions import ask
from fixloop.review.rounds import close_round, request_review, review_files, start_round
from fixloop.review.shards import fold_shard, sharded
from fixloop.review.state import RunState
from fixloop.review.step import Document, Effects, StepContext, Transition
from fixloop.review.verifier import verifier_step
from fixloop.review.views import fixes_done
from fixloop.runs.usage import over_budget


def decide_next(
    state: RunState,
    effects: Effects | None = None,
    now_ms: int | None = None,
    inplace: bool = False,
) -> Transition:
    """Advance the loop with what was recorded and return the next action document."""
    ctx = StepContext(state, effects, now_ms, inplace)
    action = _next_action(ctx)
    ctx.review["last_action"] = {"action": action["action"], "round": action.get("round"), "at_ms": ctx.now}
    return ctx.transition(action)


def _next_action(ctx: StepContext) -> Document:
    review = ctx.review
    if review.get("outcome"):
        return terminal_action(ctx)
    if not review["rounds"] and not ctx.state.get("changed_files"):
        return finish(ctx, "no_changes")

    gate = review["gate"]
    if gate["verification"] is None:
        if gate["requested_at_ms"] is None:
            gate["requested_at_ms"] = ctx.now
        return verify_action(ctx, 0, "initial")
    if not gate["passed"]:
        if gate["choice"] is None and ctx.state.get("no_gate"):
            gate["choice"] = "continue"
            failing = failed_steps_text(gate["verification"])
            text = f"The checks fail before the review ({failing}); --no-gate: reviewing anyway."
            ctx.emit("W", "WARNING", code="VERIFICATION_GATE_SKIPPED", message=text)
        if gate["choice"] is None:
            return ask(ctx, "initial_verification_failed", 0, gate["verification"])
        if gate["choice"] == "cancel":
            return finish(ctx, "user_cancelled")
        if gate["choice"] != "continue":
            return finish(ctx, "verification_failed")

    rnd = current_round(review) or start_round(ctx, 1)
    while True:
        if rnd["review_requested_at_ms"] is None:
            return request_review(ctx, rnd)
        if not rnd["closed"]:
            if sharded(rnd) and fold_shard(ctx, rnd):
                return review_files(ctx, rnd)
            failure = close_round(ctx, rnd)
            if failure is not None:
                return failure
        verifier_action = verifier_step(ctx, rnd)
        if verifier_action is not None:
            return verifier_action
        if not rnd["tracked"]:
            track(ctx, rnd)
        if rnd["convergence"] == "diverged":
            if rnd["divergence_choice"] is None:
                return ask(ctx, "review_diverged", rnd["iteration"], None)
            return finish(ctx, "issues_increased")
        if rnd["convergence"] == "converged":
            return finish(ctx, "converged")
        if not rnd["fixable"]:
            return finish(ctx, "no_fixable_issues")
        fix = rnd["fix"]
        if fix is None:
            if fixes_done(review) >= ctx.config.max_review_iterations:
                return finish(ctx, "max_iterations")
            if ctx.state.get("dry_run"):
                return finish(ctx, None)  # a dry run reports what would be fixed and changes nothing
            return request_fix(ctx, rnd)
        if not fix["done"]:
            next_batch = close_fix(ctx, rnd, fix)
            if next_batch is not None:
                return next_batch
        if rnd["verification"] is None:
            return verify_action(ctx, rnd["iteration"], "post_fix")
        if not rnd["verification_passed"]:
            if rnd["choice"] is None:
                return ask(ctx, "review_verification_failed", rnd["iteration"], rnd["verification"])
            if rnd["choice"] == "cancel":
                return finish(ctx, "user_cancelled")
            if rnd["choice"] != "continue":
                return finish(ctx, "verification_failed")
        over = over_budget(ctx.state.get("usage"), ctx.config.max_tokens, ctx.config.max_cost)
        if over is not None:
            message = f"No round {int(rnd['iteration']) + 1}: {over}."
            ctx.emit("W", "WARNING", code="BUDGET_EXHAUSTED", message=message)
            return finish(ctx, "budget_exhausted")
        rnd = start_round(ctx, int(rnd["iteration"]) + 1)
