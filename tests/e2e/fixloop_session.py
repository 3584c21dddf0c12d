"""One ``/fixloop:<command>`` session of the real CLI with the scripted model, and what it left behind.

:func:`command_session` copies the sample project (its ``CHANGED_FILES`` left uncommitted: the change under
review), merges ``config`` into its ``.claude/fixloop.json``, approves its verification commands the way a
user does (``fixloop trust``), runs the command with :class:`fixloop_model.FixloopModel` answering, and
reads back the run: state, JSONL and text logs, hook ledger, and the engine's own report. The helpers read
the request log: who sent what, and what the model answered.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from claude_runner import REPO_ROOT, ClaudeRunner, RunResult, git
from fixloop_model import CLI_PERMISSION_MODE, FixloopModel, Scenario
from scripted_api import ScriptedAPI, estimate_tokens

JSON = dict[str, Any]
ENGINE = REPO_ROOT / "scripts" / "fixloop"
CHANGED_FILES = ("inventory/report.py", "inventory/stock.py")
StartAPI = Callable[..., ScriptedAPI]  # conftest.py's start_api fixture
MakeRunner = Callable[..., ClaudeRunner]  # conftest.py's make_runner fixture


# --------------------------------------------------------------------------------------------------
# The engine, run by the test itself
# --------------------------------------------------------------------------------------------------


def engine_env(project: Path, plugin_data: Path | None = None) -> dict[str, str]:
    """An environment for running the engine on ``project`` from a test (no Claude Code session); the
    engine uses the interpreter running the tests, which has its dependencies."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC_", "FIXLOOP_"))}
    env |= {"CLAUDE_PROJECT_DIR": str(project), "FIXLOOP_PYTHON": sys.executable}
    if plugin_data is not None:
        env["FIXLOOP_DATA"] = str(plugin_data)
    return env


def run_engine_text(project: Path, *args: str, plugin_data: Path | None = None) -> tuple[int, str]:
    """``scripts/fixloop ARGS`` on ``project``: (exit code, standard output)."""
    done = subprocess.run(
        ["bash", str(ENGINE), *args],
        cwd=project,
        env=engine_env(project, plugin_data),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout


def run_engine(project: Path, *args: str, plugin_data: Path | None = None) -> tuple[int, Any]:
    """``scripts/fixloop ARGS`` on ``project``: (exit code, its JSON answer)."""
    code, out = run_engine_text(project, *args, plugin_data=plugin_data)
    try:
        return code, json.loads(out)
    except json.JSONDecodeError:
        raise AssertionError(f"fixloop {' '.join(args)} printed no JSON: {out!r}") from None


def approve_commands(project: Path, plugin_data: Path) -> JSON:
    """``fixloop trust`` in ``project``: the user approves its verification commands, remembered in the
    plugin's data directory ``plugin_data``."""
    code, answer = run_engine(project, "trust", plugin_data=plugin_data)
    assert code == 0, answer
    return dict(answer)


# --------------------------------------------------------------------------------------------------
# What a run left on disk
# --------------------------------------------------------------------------------------------------


def run_ids(project: Path) -> list[str]:
    runs = project / ".claude" / "fixloop" / "runs"
    return sorted(p.name for p in runs.iterdir() if (p / "state.json").is_file()) if runs.is_dir() else []


def _jsonl(path: Path) -> list[JSON]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass
class RunRecord:
    """A run as the test reads it back from the project."""

    project: Path
    run_id: str
    state: JSON
    events: list[JSON]  # the JSONL log, in order
    text_log: str
    ledger: list[JSON]  # runs/<id>/agents.jsonl

    def of_type(self, kind: str, **where: Any) -> list[JSON]:
        return [
            e for e in self.events if e.get("type") == kind and all(e.get(k) == v for k, v in where.items())
        ]

    @property
    def review(self) -> JSON:
        value = self.state.get("review")
        return value if isinstance(value, dict) else {}

    def round(self, number: int) -> JSON:
        (found,) = [r for r in self.review.get("rounds", []) if r["iteration"] == number]
        return dict(found)


def read_run(project: Path, run_id: str | None = None) -> RunRecord:
    """The run (the project's only one unless ``run_id`` is given): state, logs, ledger."""
    if run_id is None:
        ids = run_ids(project)
        assert len(ids) == 1, f"expected exactly one run in {project}, found {ids}"
        run_id = ids[0]
    run_dir = project / ".claude" / "fixloop" / "runs" / run_id
    state = json.loads((run_dir / "state.json").read_text(encoding="utf-8"))
    files = (state.get("logging") or {}).get("log_files") or {}
    text = Path(str(files.get("text")))
    return RunRecord(
        project,
        run_id,
        state,
        _jsonl(Path(str(files.get("jsonl")))),
        text.read_text(encoding="utf-8") if text.is_file() else "",
        _jsonl(run_dir / "agents.jsonl"),
    )


def parse_ts(value: str) -> float:
    """Epoch seconds of a log ``ts`` (``2024-12-06T14:30:52.123Z``)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


# (end event, its duration field, start event, the fields that pair an end with its start)
DURATION_PAIRS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("AGENT_RESULT", "duration_ms", "AGENT_CALL", ("tool_use_id",)),
    ("PHASE_END", "duration_ms", "PHASE_START", ("phase",)),
    ("REVIEW_PARALLEL_END", "duration_ms", "REVIEW_PARALLEL_START", ("iteration",)),
    ("SESSION_END", "total_duration_ms", "SESSION_START", ()),
)


def duration_mismatches(events: Sequence[Mapping[str, Any]], tolerance_ms: int = 250) -> list[str]:
    """Logged durations that disagree with the log's own clock (empty: all agree). An end event pairs with
    the latest earlier start event of the same key (DURATION_PAIRS)."""
    problems: list[str] = []
    for end_type, field_name, start_type, keys in DURATION_PAIRS:
        starts: dict[tuple[Any, ...], Mapping[str, Any]] = {}
        for event in events:
            key = tuple(event.get(k) for k in keys)
            if event.get("type") == start_type:
                starts[key] = event
            if event.get("type") != end_type or field_name not in event:
                continue
            start = starts.pop(key, None)
            label = f"{end_type} {dict(zip(keys, key, strict=True))} at {event.get('ts')}"
            if start is None:
                problems.append(f"{label}: no {start_type} before it")
                continue
            wall = (parse_ts(str(event["ts"])) - parse_ts(str(start["ts"]))) * 1000
            if abs(wall - int(event[field_name])) > tolerance_ms:
                problems.append(
                    f"{label}: {field_name} {event[field_name]} but {wall:.0f} ms since {start_type}"
                )
    return problems


# --------------------------------------------------------------------------------------------------
# The request log
# --------------------------------------------------------------------------------------------------


def reply_text(record: Mapping[str, Any]) -> str:
    """The text blocks of the reply sent for a request log record."""
    content = (record.get("reply") or {}).get("content") or []
    return "".join(str(block.get("text", "")) for block in content if block.get("type") == "text")


def reply_tool_uses(record: Mapping[str, Any]) -> list[JSON]:
    content = (record.get("reply") or {}).get("content") or []
    return [dict(block) for block in content if block.get("type") == "tool_use"]


def agent_id(record: Mapping[str, Any]) -> str | None:
    return (record.get("headers") or {}).get("x-claude-code-agent-id")


def reply_usage(record: Mapping[str, Any]) -> JSON:
    """The usage the scripted API reported for a request: input tokens estimated from the body, output
    tokens one per streamed delta plus one."""
    content = (record.get("reply") or {}).get("content") or []
    return {"input_tokens": estimate_tokens(record["body"]), "output_tokens": 1 + len(content)}


# --------------------------------------------------------------------------------------------------
# A session
# --------------------------------------------------------------------------------------------------


@dataclass
class Session:
    """One command run and everything it left behind."""

    result: RunResult
    api: ScriptedAPI
    model: FixloopModel
    project: Path
    plugin_data: Path
    run: RunRecord
    report: JSON  # `fixloop review report RUN --format json`, run by the test itself

    @property
    def requests(self) -> list[JSON]:
        """The run's ``/v1/messages`` request log records, in arrival order."""
        return self.result.message_requests()

    def requests_of(self, sender: str) -> list[JSON]:
        return [r for r in self.requests if r.get("rule") == sender]

    def instances(self, sender: str) -> list[list[JSON]]:
        """The requests of each run of subagent ``sender`` (grouped by Claude Code's agent id), in order."""
        groups: dict[str | None, list[JSON]] = {}
        for record in self.requests_of(sender):
            groups.setdefault(agent_id(record), []).append(record)
        return sorted(groups.values(), key=lambda group: float(group[0]["received_at"]))

    def dispatches(self) -> list[list[JSON]]:
        """The coordinator's replies that call agents, each as its list of tool_use blocks."""
        return [uses for uses in map(reply_tool_uses, self.requests_of("coordinator")) if uses]

    def dispatched(self) -> list[list[str]]:
        """The agents of each dispatch, by name, in call order."""
        return [
            [str(u["input"]["subagent_type"]).split(":", 1)[1] for u in uses] for uses in self.dispatches()
        ]


def command_session(
    start_api: StartAPI,
    make_runner: MakeRunner,
    plugin_data: Path,
    scenario: Scenario,
    *,
    command: str = "review",
    arguments: str = "",
    config: Mapping[str, Any] | None = None,
    before: Callable[[Path], None] | None = None,
    trust: bool = True,
    uncommitted: Sequence[str] = CHANGED_FILES,
    timeout: float = 180.0,
    project: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Session:
    """Run ``/fixloop:COMMAND ARGUMENTS`` with the scripted model of ``scenario`` on a fresh copy of the
    sample project. ``config`` is merged into its ``.claude/fixloop.json`` and committed; ``trust``
    approves its verification commands first; ``before(project)`` runs just before the CLI. ``project``: run
    in this project (one an earlier session left) instead of a fresh copy; the session reads back the new run.
    ``plugin_data``: the ``shared_plugin_data`` fixture (the engine's environment is built once). ``env``:
    extra variables of the CLI's environment (and so of the hooks, the engine and the commands it runs).
    AssertionError when the CLI failed, the model met a problem or a request matched no sender."""
    model = FixloopModel(scenario)
    api = start_api(model.script())
    runner = make_runner(api, shared_plugin_data=plugin_data, timeout=timeout, env=env)
    earlier_runs = set(run_ids(project)) if project is not None else set()
    if project is None:
        project = runner.new_project(uncommitted=uncommitted)
    if config:
        path = project / ".claude" / "fixloop.json"
        settings = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**settings, **config}, indent=2) + "\n", encoding="utf-8")
        git(project, "commit", "-q", "-m", "loop settings", "--", ".claude/fixloop.json")
    if trust:
        approve_commands(project, plugin_data)
    if before is not None:
        before(project)
    started = time.monotonic()
    result = runner.run(
        f"/fixloop:{command} {arguments}".strip(), project_dir=project, permission_mode=CLI_PERMISSION_MODE
    )
    print(f"/fixloop:{command}: {time.monotonic() - started:.2f}s, {len(result.message_requests())} requests")
    failures = []
    if (result.exit_code, result.timed_out, result.is_error) != (0, False, False):
        failures.append(f"the CLI failed: {result.summary()}")
    failures += [f"scripted model: {problem}" for problem in model.problems]
    failures += [f"no sender for request {r.seq}" for r in api.unmatched]
    if failures:
        raise AssertionError("\n".join(failures))
    new_runs = sorted(set(run_ids(project)) - earlier_runs)
    record = read_run(project, new_runs[0] if earlier_runs and len(new_runs) == 1 else None)
    code, report = run_engine(project, "review", "report", record.run_id, plugin_data=plugin_data)
    assert code == 0, report
    return Session(result, api, model, project, plugin_data, record, report)
