"""The engine as the hooks run it: `scripts/fixloop` in a subprocess, in the project of the run.

- `record`: `fixloop record RUN --agent NAME --from-hook AGENT_ID -` (the message on stdin) checks a fixloop
  agent's final answer against its output contract, for the phase waiting for it, and answers one JSON
  object: `status` ("recorded"), `valid`, `retry`, `attempt`, `error`, `hint`, what the hooks report of
  the call, `agent_status` (the answer's own status, null when invalid) and `issues_count` (reviewers'
  issues, else null), and optionally `continue` (the agent must go on with that instruction).
- `next_step`: `fixloop next RUN --text`, the run's next action as the coordinator reads it; when the
  engine cannot give it, the text that tells the coordinator to end, and a WARNING.
Both may run tests or verification first: their time limits are long.
"""

from __future__ import annotations

import os

from fixloop.core import jsoncodec
from fixloop.hookside import PLUGIN_ROOT
from fixloop.hookside.payload import REPORT_STATUSES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from subprocess import CompletedProcess
    from typing import Any

    from fixloop.hookside.context import RunContext

ENGINE_TIMEOUT_S = 1700.0  # under the hooks' 1800 s, so a hook that gives up can still say why
ENGINE_ENV = "FIXLOOP_HOOK_ENGINE"  # another engine command (tests, debugging); default scripts/fixloop
TIMEOUT_ENV = "FIXLOOP_RECORD_TIMEOUT"
NEXT_TIMEOUT_ENV = "FIXLOOP_NEXT_TIMEOUT"
REASON_CHARS = 300


class EngineUnavailable(Exception):
    pass


def engine_command() -> list[str]:
    configured = os.environ.get(ENGINE_ENV)
    if configured:
        return [configured]
    return ["bash", os.path.join(PLUGIN_ROOT, "scripts", "fixloop")]


def _timeout(variable: str) -> float:
    try:
        return float(os.environ.get(variable, ENGINE_TIMEOUT_S))
    except ValueError:
        return ENGINE_TIMEOUT_S


def _run(context: RunContext, args: list[str], stdin: bytes, timeout_env: str) -> CompletedProcess[bytes]:
    import subprocess  # only the hooks that call the engine pay for it

    label = f"`fixloop {args[0]}`"
    timeout = _timeout(timeout_env)
    try:
        return subprocess.run(
            [*engine_command(), *args],
            input=stdin,
            capture_output=True,
            timeout=timeout,
            cwd=context.root,
            env={**os.environ, "CLAUDE_PROJECT_DIR": context.root},
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise EngineUnavailable(f"{label} did not answer within {timeout:g}s") from None
    except OSError as error:
        raise EngineUnavailable(f"cannot run the engine: {error}") from None


def _last_stderr_line(done: CompletedProcess[bytes]) -> str:
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "no output"


def record(context: RunContext, agent: str, agent_id: str, message: bytes) -> dict[str, Any]:
    """The engine's answer to `fixloop record` (a JSON object); EngineUnavailable when there is none."""
    args = ["record", context.run_id, "--agent", agent, "--from-hook", agent_id, "-"]
    done = _run(context, args, message, TIMEOUT_ENV)
    try:
        answer = jsoncodec.loads(done.stdout)
    except ValueError:
        raise EngineUnavailable(
            f"`fixloop record` exited {done.returncode} without a JSON answer: {_last_stderr_line(done)}"[
                :500
            ]
        ) from None
    if not isinstance(answer, dict):
        raise EngineUnavailable(f"`fixloop record` answered a JSON {type(answer).__name__}")
    problem = answer.get("error")
    if done.returncode == 3 or (isinstance(problem, dict) and problem.get("code") == "ENGINE_UNAVAILABLE"):
        message_text = problem.get("message") if isinstance(problem, dict) else None
        raise EngineUnavailable(str(message_text or "the engine is unavailable"))
    return answer


def next_text(context: RunContext, stopped: bool = False) -> str:
    """The engine's answer to `fixloop next RUN --text` (with `--stopped`: the model that carries the run
    has stopped); EngineUnavailable, with the reason, when none."""
    args = ["next", context.run_id, "--text", *(["--stopped"] if stopped else [])]
    done = _run(context, args, b"", NEXT_TIMEOUT_ENV)
    text = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode == 0 and text:
        return text
    try:
        answer = jsoncodec.loads(done.stdout) if text.startswith("{") else None
    except ValueError:
        answer = None
    problem = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(problem, dict) and (problem.get("code") or problem.get("message")):
        raise EngineUnavailable(f"{problem.get('code') or 'ERROR'}: {problem.get('message') or 'no details'}")
    raise EngineUnavailable(f"`fixloop next` exited {done.returncode}: {_last_stderr_line(done)}")


def failure_text(reason: str) -> str:
    """What the coordinator is told when the engine gave no next step: end, and say why."""
    return (
        f"fixloop could not give the next step: {reason}. End now; your final message is exactly: "
        f"fixloop: {reason}"
    )


def next_step(context: RunContext, hook: str) -> str:
    """The run's next action for the coordinator, or the failure text (and a WARNING) when there is none."""
    try:
        return next_text(context)
    except EngineUnavailable as error:
        reason = " ".join(str(error).split())[:REASON_CHARS].rstrip(". ") or "no reason given"
    context.warn(
        "NEXT_STEP_FAILED",
        f"The engine gave no next step for run {context.run_id}: {reason}",
        hook=hook,
        impact="the coordinator was told to end and report this",
    )
    return failure_text(reason)


def error_code(answer: Mapping[str, Any]) -> str | None:
    error = answer.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        return str(error["code"])
    return None


def agent_status(answer: Mapping[str, Any]) -> str | None:
    """The status the recorded answer claims (success, failed or partial), as the engine read it."""
    status = answer.get("agent_status")
    return status if status in REPORT_STATUSES else None


def issues_count(answer: Mapping[str, Any]) -> int | None:
    """How many issues a reviewer's recorded answer holds, as the engine counted them."""
    count = answer.get("issues_count")
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None
