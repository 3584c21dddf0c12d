"""Process time of each fixloop hook, run as hooks/hooks.json runs it, next to `python3 -c pass`.

    python3 tests/benchmarks/bench_hooks.py [--runs N] [--hook-python PATH]

Prints, per case, the median over N runs of the process's wall time and of its CPU time (user + system
of the hook and its children, which other load on the machine disturbs less), and the ratios of both to
`python3 -c pass` of the hooks' interpreter (this one unless --hook-python names another; the engine
that SubagentStop calls always runs on this one).
The hooks that fire on every subagent call (PreToolUse, PostToolUse, SubagentStart), on every prompt
(UserPromptSubmit) and on every Edit/Write (PreToolUse, PostToolUse: anyone's edit starts no interpreter,
a fixloop agent's is recorded) aim at <= 2x.
`python3 -S -c pass` is printed too: the ratio depends on how much the interpreter's site-packages cost
at start-up (hooks run with -S), so compare the absolute figures across machines.
SubagentStop runs the engine (`fixloop record`) once per agent but the coordinator; SessionStart once per
session. Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

HOOKS = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
EVERY_CALL = ("PreToolUse", "PostToolUse", "SubagentStart", "UserPromptSubmit")


def command_of(event: str, matcher: str = "Agent|Task") -> str:
    """The command of `event`'s entry with `matcher` (the only entry for events without one)."""
    entries = HOOKS[event]
    (entry,) = [e for e in entries if e.get("matcher", matcher) == matcher] if len(entries) > 1 else entries
    command: str = entry["hooks"][0]["command"]
    return command


def medians_ms(
    lifecycle: int, make: Callable[[int], tuple[list[str], bytes]], env: dict[str, str], cwd: Path
) -> tuple[float, float]:
    """(median wall ms, median CPU ms) of `runs` processes."""
    walls: list[float] = []
    cpus: list[float] = []
    for index in range(lifecycle):
        argv, stdin = make(index)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, check=False)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--hook-python",
        default=sys.executable,
        help="the interpreter the hooks run on, and the baseline (default: this one)",
    )
    args = parser.parse_args()
    hook_python: str = args.hook_python

    from fixloop.runs import creation

    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp)
        project = base / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("x = 1\n")
        data = base / "data"
        data.mkdir()
        (data / "python3-path").write_text(hook_python + "\n")
        session = "bench-session"
        os.environ["CLAUDE_PROJECT_DIR"] = str(project)
        state = creation.start_run(
            "review", root=project, changed_files=["src/app.py"], claude_session_id=session
        )["state"]
        # A pending dispatch of the six reviewers: calls get its model, reviewers their task.
        from fixloop.store import edits, layout
        from fixloop.workflows.driver import next_action

        next_action(project, state["run_id"])
        # An open fix round (touch window): each measured fixer edit is the first touch of its own file.
        for index in range(args.runs):
            (project / "src" / f"edit{index}.py").write_text("x = 1\n" * 200)
        edits.begin(project, Path(layout.run_dir(project, state["run_id"])), "round-1")
        env = {
            **os.environ,
            "CLAUDE_PLUGIN_ROOT": str(ROOT),
            "CLAUDE_PLUGIN_DATA": str(data),
            "CLAUDE_PROJECT_DIR": str(project),
            "CLAUDE_CODE_SESSION_ID": session,
            "FIXLOOP_PYTHON": sys.executable,
            "FIXLOOP_NO_BUILD": "1",
        }

        def common(event: str, session_id: str = session) -> dict[str, Any]:
            return {
                "session_id": session_id,
                "transcript_path": "/t",
                "cwd": str(project),
                "hook_event_name": event,
            }

        def hook(
            event: str, payload: Callable[[int], dict[str, Any]]
        ) -> Callable[[int], tuple[list[str], bytes]]:
            return lambda index: (["sh", "-c", command_of(event)], json.dumps(payload(index)).encode())

        def pre(agent: str, session_id: str = session) -> Callable[[int], dict[str, Any]]:
            return lambda index: {
                **common("PreToolUse", session_id),
                "tool_name": "Agent",
                "tool_input": {"description": "d", "prompt": "p", "subagent_type": agent},
                "tool_use_id": f"toolu_{agent}_{index}",
            }

        def post(agent: str) -> Callable[[int], dict[str, Any]]:
            def make(index: int) -> dict[str, Any]:
                payload = pre(agent)(index)
                payload["hook_event_name"] = "PostToolUse"
                payload["duration_ms"] = 5
                payload["tool_response"] = {
                    "status": "completed",
                    "agentId": f"a{index}",
                    "content": [{"type": "text", "text": '{"status":"success","issues":[]}'}],
                }
                return payload

            return make

        def edit(event: str, agent_type: str | None) -> Callable[[int], tuple[list[str], bytes]]:
            def make(index: int) -> tuple[list[str], bytes]:
                path = str(project / "src" / f"edit{index}.py")
                payload: dict[str, Any] = {
                    **common(event),
                    "tool_name": "Edit",
                    "tool_input": {
                        "file_path": path,
                        "old_string": "x",
                        "new_string": "y",
                        "replace_all": False,
                    },
                    "tool_use_id": f"toolu_edit_{index}",
                }
                if agent_type is not None:
                    payload.update(agent_id="a-edit", agent_type=agent_type)
                if event == "PostToolUse":
                    payload["tool_response"] = {
                        "filePath": path,
                        "structuredPatch": [],
                        "userModified": False,
                    }
                command = command_of(event, "Edit|Write|MultiEdit|NotebookEdit")
                return ["sh", "-c", command], json.dumps(payload, separators=(",", ":")).encode()

            return make

        cases: list[tuple[str, str, Callable[[int], tuple[list[str], bytes]]]] = [
            ("baseline", "python3 -c pass", lambda _i: ([hook_python, "-c", "pass"], b"")),
            ("baseline", "python3 -S -c pass", lambda _i: ([hook_python, "-S", "-c", "pass"], b"")),
            (
                "PreToolUse",
                "no run, non-fixloop agent",
                hook("PreToolUse", pre("general-purpose", "other")),
            ),
            (
                "PreToolUse",
                "no run, fixloop agent",
                hook("PreToolUse", pre("fixloop:code-reviewer", "other")),
            ),
            ("PreToolUse", "run, non-fixloop agent", hook("PreToolUse", pre("general-purpose"))),
            ("PreToolUse", "run, fixloop:review-fixer", hook("PreToolUse", pre("fixloop:review-fixer"))),
            ("PreToolUse", "run, reviewer (group lock)", hook("PreToolUse", pre("fixloop:code-reviewer"))),
            ("PostToolUse", "run, fixloop:review-fixer", hook("PostToolUse", post("fixloop:review-fixer"))),
            ("PostToolUse", "run, reviewer (group lock)", hook("PostToolUse", post("fixloop:code-reviewer"))),
            ("PreToolUse", "Edit, main thread (no interpreter)", edit("PreToolUse", None)),
            ("PreToolUse", "Edit, other agent (no interpreter)", edit("PreToolUse", "general-purpose")),
            ("PreToolUse", "Edit, review-fixer (prior kept)", edit("PreToolUse", "fixloop:review-fixer")),
            (
                "PostToolUse",
                "Edit, review-fixer (write recorded)",
                edit("PostToolUse", "fixloop:review-fixer"),
            ),
            (
                "SubagentStart",
                "run, fixloop:code-reviewer",
                hook(
                    "SubagentStart",
                    lambda i: {
                        **common("SubagentStart"),
                        "agent_id": f"s{i}",
                        "agent_type": "fixloop:code-reviewer",
                    },
                ),
            ),
            (
                "SubagentStop",
                "run, reviewer (engine records)",
                hook(
                    "SubagentStop",
                    lambda i: {
                        **common("SubagentStop"),
                        "agent_id": f"t{i}",
                        "agent_type": "fixloop:code-reviewer",
                        "stop_hook_active": False,
                        "agent_transcript_path": "/t",
                        "last_assistant_message": '{"status":"success","agent":"code-reviewer","issues":[]}',
                    },
                ),
            ),
            (
                "SubagentStop",
                "run, coordinator (no contract)",
                hook(
                    "SubagentStop",
                    lambda i: {
                        **common("SubagentStop"),
                        "agent_id": f"c{i}",
                        "agent_type": "fixloop:coordinator",
                        "stop_hook_active": False,
                        "agent_transcript_path": "/t",
                        "last_assistant_message": "Review finished: 0 issues remain.",
                    },
                ),
            ),
            (
                "UserPromptSubmit",
                "other prompt (no interpreter)",
                hook("UserPromptSubmit", lambda i: {**common("UserPromptSubmit"), "prompt": f"fix test {i}"}),
            ),
            (
                "UserPromptSubmit",
                "/fixloop: prompt (kept)",
                hook(
                    "UserPromptSubmit",
                    lambda i: {
                        **common("UserPromptSubmit"),
                        "prompt": f"/fixloop:fix-backend src/app.py {i}",
                        "prompt_id": f"p{i}",
                    },
                ),
            ),
            (
                "SessionStart",
                "environment fresh or not wanted",
                hook("SessionStart", lambda _i: {**common("SessionStart"), "source": "startup"}),
            ),
        ]
        python = subprocess.run(
            [hook_python, "-c", "import sys; print(sys.version.split()[0])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        print(f"fixloop hooks, median of {args.runs} runs, run {state['run_id']}, python {python}")
        base_wall = base_cpu = 0.0
        print(f"{'hook':<16} {'case':<34} {'wall ms':>8} {'ratio':>6} {'cpu ms':>7} {'ratio':>6}")
        for event, label, make in cases:
            engine_runs = "engine" in label  # the slow case: fewer runs
            runs_count = max(5, args.runs // 4) if engine_runs else args.runs
            wall, cpu = medians_ms(runs_count, make, env, project)
            if label == "python3 -c pass":
                base_wall, base_cpu = wall, cpu
            wall_ratio = wall / base_wall if base_wall else float("nan")
            cpu_ratio = cpu / base_cpu if base_cpu else float("nan")
            flag = ""
            if event in EVERY_CALL:
                flag = "  ok (<= 2x)" if min(wall_ratio, cpu_ratio) <= 2 else "  over 2x"
            figures = f"{wall:>8.1f} {wall_ratio:>5.2f}x {cpu:>7.1f} {cpu_ratio:>5.2f}x"
            print(f"{event:<16} {label:<34} {figures}{flag}")
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
