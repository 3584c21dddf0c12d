"""Recording a contracted agent's final answer into its run with the engine, as a subprocess.

`scripts/fixloop review record RUN --agent NAME --from-hook AGENT_ID -` (the message on stdin) checks the
answer against the agent's output contract and answers one JSON object: `status` ("recorded"), `valid`,
`retry`, `attempt`, `error`, `hint`, and what the hooks report of the call, `agent_status` (the answer's
own status, null when invalid) and `issues_count` (reviewers' issues, else null).
"""

from __future__ import annotations

import os

from fixloop.core import jsoncodec
from fixloop.hookside import PLUGIN_ROOT
from fixloop.hookside.payload import REPORT_STATUSES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fixloop.hookside.context import RunContext

ENGINE_TIMEOUT_S = 50.0
ENGINE_ENV = "FIXLOOP_HOOK_ENGINE"  # another engine command (tests, debugging); default scripts/fixloop
TIMEOUT_ENV = "FIXLOOP_RECORD_TIMEOUT"


class EngineUnavailable(Exception):
    pass


def engine_command() -> list[str]:
    configured = os.environ.get(ENGINE_ENV)
    if configured:
        return [configured]
    return ["bash", os.path.join(PLUGIN_ROOT, "scripts", "fixloop")]


def _timeout() -> float:
    try:
        return float(os.environ.get(TIMEOUT_ENV, ENGINE_TIMEOUT_S))
    except ValueError:
        return ENGINE_TIMEOUT_S


def record(context: RunContext, agent: str, agent_id: str, message: bytes) -> dict[str, Any]:
    """The engine's answer to `review record` (a JSON object); EngineUnavailable when there is none."""
    import subprocess  # only the stops of contracted agents pay for it

    command = [
        *engine_command(),
        "review",
        "record",
        context.run_id,
        "--agent",
        agent,
        "--from-hook",
        agent_id,
    ]
    timeout = _timeout()
    try:
        done = subprocess.run(
            [*command, "-"],
            input=message,
            capture_output=True,
            timeout=timeout,
            cwd=context.root,
            env={**os.environ, "CLAUDE_PROJECT_DIR": context.root},
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise EngineUnavailable(f"`fixloop review record` did not answer within {timeout:g}s") from None
    except OSError as error:
        raise EngineUnavailable(f"cannot run the engine: {error}") from None
    try:
        answer = jsoncodec.loads(done.stdout)
    except ValueError:
        stderr = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = stderr[-1] if stderr else "no output"
        raise EngineUnavailable(
            f"`fixloop review record` exited {done.returncode} without a JSON answer: {detail}"[:500]
        ) from None
    if not isinstance(answer, dict):
        raise EngineUnavailable(f"`fixloop review record` answered a JSON {type(answer).__name__}")
    problem = answer.get("error")
    if done.returncode == 3 or (isinstance(problem, dict) and problem.get("code") == "ENGINE_UNAVAILABLE"):
        message_text = problem.get("message") if isinstance(problem, dict) else None
        raise EngineUnavailable(str(message_text or "the engine is unavailable"))
    return answer


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
