"""Helpers for the hook tests: the real hook commands, run as hooks/hooks.json runs them.

Each test gets a project directory, a plugin data directory and a Claude Code session id; hooks are
launched with `sh ${CLAUDE_PLUGIN_ROOT}/hooks/run-hook NAME` with Claude Code's payload shapes on stdin.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PLUGIN_ROOT = Path(__file__).resolve().parents[2]
LIB = PLUGIN_ROOT / "scripts" / "lib"

HOOKS_JSON = PLUGIN_ROOT / "hooks" / "hooks.json"
REQUIREMENTS = PLUGIN_ROOT / "scripts" / "requirements.lock"
REPORTED_MS = 987654  # Claude Code's own duration in the payloads: must never become duration_ms
RESOLVED_MODEL = "claude-sonnet-4-5-20250929"
# What the hooks keep of the usage that post_tool_use() reports.
REPORTED_USAGE = {
    "usage": {
        "input_tokens": 100,
        "output_tokens": 50,
        "cache_creation_input_tokens": 20,
        "cache_read_input_tokens": 300,
    },
    "total_tokens": 1234,
    "model": RESOLVED_MODEL,
    "tool_uses": 3,
}

# Variables of the developer's shell that would change what the hooks and the entry point do.
_SCRUBBED = (
    "FIXLOOP_PYTHON",
    "FIXLOOP_NO_BUILD",
    "FIXLOOP_BUILD_PYTHON",
    "FIXLOOP_HOOK_ENGINE",
    "FIXLOOP_RECORD_TIMEOUT",
    "FIXLOOP_NEXT_TIMEOUT",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_ENV_FILE",
    "FIXLOOP_DATA",
    "PYTHONPATH",
)


def base_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in _SCRUBBED}


def hook_command(event: str, tool: str | None = None) -> str:
    """The command hooks.json runs for `event`, with ${CLAUDE_PLUGIN_ROOT} left for the shell to expand:
    of the entry whose matcher matches `tool` as Claude Code matches it (the whole name), else the first."""
    config = json.loads(HOOKS_JSON.read_text())
    entries = config["hooks"][event]
    if tool is not None:
        (entry,) = [e for e in entries if re.fullmatch(e.get("matcher") or ".*", tool)]
    else:
        entry = entries[0]
    (hook,) = entry["hooks"]
    command: str = hook["command"]
    return command


@dataclass
class HookEnv:
    root: Path
    data: Path
    project: Path
    session: str
    env: dict[str, str] = field(default_factory=dict)

    def run(
        self,
        event: str,
        payload: dict[str, Any] | str | bytes,
        extra_env: dict[str, str] | None = None,
        timeout: float = 120,
        tool: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run the hook command hooks.json registers for `event` (and `tool`, see hook_command) through a
        shell, as Claude Code does."""
        if isinstance(payload, dict):
            data = json.dumps(payload).encode()
        elif isinstance(payload, str):
            data = payload.encode()
        else:
            data = payload
        env = {**self.env, **(extra_env or {})}
        done = subprocess.run(
            ["sh", "-c", hook_command(event, tool)],
            input=data,
            capture_output=True,
            env=env,
            cwd=self.project,
            timeout=timeout,
            check=False,
        )
        return subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
        )

    # ---- payloads (shapes observed from Claude Code 2.1.328) ----------------------------------

    def common(self, event: str) -> dict[str, Any]:
        return {
            "session_id": self.session,
            "transcript_path": str(self.project / "transcript.jsonl"),
            "cwd": str(self.project),
            "hook_event_name": event,
        }

    def pre_tool_use(
        self,
        agent_type: str,
        tool_use_id: str,
        background: bool | None = False,
        parent: tuple[str, str] | None = None,
        description: str = "Review the change",
        prompt: str = "Review src/app.py for defects.",
        tool_name: str = "Agent",
    ) -> dict[str, Any]:
        tool_input: dict[str, Any] = {
            "description": description,
            "prompt": prompt,
            "subagent_type": agent_type,
        }
        if background is not None:
            tool_input["run_in_background"] = background
        payload = {
            **self.common("PreToolUse"),
            "tool_name": tool_name,
            "tool_input": tool_input,
            "tool_use_id": tool_use_id,
        }
        if parent is not None:
            payload["agent_id"], payload["agent_type"] = parent
        return payload

    def post_tool_use(
        self, agent_type: str, tool_use_id: str, agent_id: str, report: str, tool_name: str = "Agent"
    ) -> dict[str, Any]:
        payload = self.pre_tool_use(agent_type, tool_use_id, tool_name=tool_name)
        payload["hook_event_name"] = "PostToolUse"
        payload["duration_ms"] = REPORTED_MS
        payload["tool_response"] = {
            "status": "completed",
            "agentId": agent_id,
            "agentType": agent_type,
            "content": [{"type": "text", "text": report}],
            "resolvedModel": RESOLVED_MODEL,
            "totalDurationMs": REPORTED_MS,
            "totalTokens": 1234,
            "totalToolUseCount": 3,
            "usage": {
                "input_tokens": 100,
                "output_tokens": 50,
                "cache_creation_input_tokens": 20,
                "cache_read_input_tokens": 300,
                "server_tool_use": {"web_search_requests": 0},
                "service_tier": "standard",
            },
        }
        return payload

    def post_tool_use_async(self, agent_type: str, tool_use_id: str, agent_id: str) -> dict[str, Any]:
        payload = self.pre_tool_use(agent_type, tool_use_id, background=True)
        payload["hook_event_name"] = "PostToolUse"
        payload["duration_ms"] = 12
        payload["tool_response"] = {
            "isAsync": True,
            "status": "async_launched",
            "agentId": agent_id,
            "description": "Review the change",
            "prompt": "Review src/app.py for defects.",
            "outputFile": str(self.project / f"{agent_id}.output"),
        }
        return payload

    def subagent_start(self, agent_type: str, agent_id: str) -> dict[str, Any]:
        return {**self.common("SubagentStart"), "agent_id": agent_id, "agent_type": agent_type}

    def subagent_stop(
        self, agent_type: str, agent_id: str, message: str, stop_hook_active: bool = False
    ) -> dict[str, Any]:
        return {
            **self.common("SubagentStop"),
            "agent_id": agent_id,
            "agent_type": agent_type,
            "stop_hook_active": stop_hook_active,
            "agent_transcript_path": str(self.project / f"agent-{agent_id}.jsonl"),
            "last_assistant_message": message,
        }


@dataclass
class Run:
    hooks: HookEnv
    run_id: str

    @property
    def dir(self) -> Path:
        return self.hooks.project / ".claude" / "fixloop" / "runs" / self.run_id

    def state(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads((self.dir / "state.json").read_text())
        return doc

    def log_path(self) -> Path:
        return Path(self.state()["logging"]["log_files"]["jsonl"])

    def events(self, *types: str) -> list[dict[str, Any]]:
        path = self.log_path()
        if not path.exists():
            return []
        events = [json.loads(line) for line in path.read_text().splitlines()]
        return [event for event in events if not types or event["type"] in types]

    def ledger(self) -> list[dict[str, Any]]:
        path = self.dir / "agents.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def engine(self, *args: str, stdin: str | None = None) -> tuple[int, dict[str, Any]]:
        """Run the real engine entry point on this run's project (as the coordinator would)."""
        done = subprocess.run(
            ["bash", str(PLUGIN_ROOT / "scripts" / "fixloop"), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.hooks.env,
            cwd=self.hooks.project,
            timeout=120,
            check=False,
        )
        try:
            doc = json.loads(done.stdout)
        except ValueError:
            raise AssertionError(f"engine printed no JSON: {done.stdout!r} {done.stderr!r}") from None
        assert isinstance(doc, dict)
        return done.returncode, doc


def make_hooks(tmp_path: Path) -> HookEnv:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def f(x):\n    return x + 1\n")
    data = tmp_path / "plugin-data"
    data.mkdir()
    # What SessionStart leaves behind: the real interpreter for the launcher.
    (data / "python3-path").write_text(sys.executable + "\n")
    env = base_env()
    session = f"sess-{uuid.uuid4().hex[:12]}"
    env.update(
        CLAUDE_PLUGIN_ROOT=str(PLUGIN_ROOT),
        CLAUDE_PLUGIN_DATA=str(data),
        CLAUDE_PROJECT_DIR=str(project.resolve()),
        CLAUDE_CODE_SESSION_ID=session,
        # The engine (scripts/fixloop) runs on this interpreter; never build an environment here.
        FIXLOOP_PYTHON=sys.executable,
        FIXLOOP_NO_BUILD="1",
    )
    return HookEnv(PLUGIN_ROOT, data, project.resolve(), session, env)


def start_run(hooks: HookEnv, *, log: bool = True, workflow: str = "bugfix") -> Run:
    """A run of `workflow` on src/app.py, bound to the session (`review`: the workflow `fixloop next`
    drives)."""
    from fixloop.runs import creation, trust

    if workflow == "review":  # a check that passes, approved by the user: the review gates on it
        config = hooks.project / ".claude" / "fixloop.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({"test_command": "true"}))
        trust.approve(hooks.project, {"tests": "true"}, data=str(hooks.data))
    result = creation.start_run(
        workflow,
        root=hooks.project,
        stack="backend" if workflow == "bugfix" else None,
        log=log,
        changed_files=["src/app.py"],
        claude_session_id=hooks.session,
    )
    return Run(hooks, result["state"]["run_id"])


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def fake_engine(
    directory: Path,
    answers: list[dict[str, Any] | str],
    exit_codes: list[int] | None = None,
    sleep: float = 0,
) -> Path:
    """An engine command: logs each call (argv, stdin sha256) to calls.jsonl, prints the next answer."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "answers.json").write_text(json.dumps(answers))
    (directory / "codes.json").write_text(json.dumps(exit_codes or [0] * len(answers)))
    script = f"""#!{sys.executable}
import hashlib, json, sys, time
from pathlib import Path
here = Path({str(directory)!r})
data = sys.stdin.buffer.read()
calls = here / "calls.jsonl"
n = len(calls.read_text().splitlines()) if calls.exists() else 0
with calls.open("a") as out:
    out.write(json.dumps({{"argv": sys.argv[1:], "stdin_sha256": hashlib.sha256(data).hexdigest()}}) + "\\n")
time.sleep({sleep!r})
answers = json.loads((here / "answers.json").read_text())
codes = json.loads((here / "codes.json").read_text())
answer = answers[min(n, len(answers) - 1)]
sys.stdout.write(answer if isinstance(answer, str) else json.dumps(answer, indent=2))
sys.exit(codes[min(n, len(codes) - 1)])
"""
    return write_executable(directory / "engine", script)


def recorded_answer(agent: str, issues: int | None = None, status: str = "success") -> dict[str, Any]:
    """The real engine's answer to `fixloop record` for a valid answer of `agent` (`issues`: a reviewer's)."""
    return {
        "status": "recorded",
        "agent": agent,
        "round": 1,
        "valid": True,
        "retry": False,
        "attempt": 1,
        "error": None,
        "hint": None,
        "agent_status": status,
        "issues_count": issues,
    }


def engine_calls(directory: Path) -> list[dict[str, Any]]:
    path = directory / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def shell_quote(path: Path) -> str:
    return shlex.quote(str(path))


def bare_python(tmp_path: Path) -> Path:
    """A Python (a venv of this interpreter, without pip) that has none of the engine's dependencies."""
    import venv

    target = tmp_path / "bare-venv"
    if not target.exists():
        venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    return target / "bin" / "python3"


def tool_dir(tmp_path: Path, python3: Path | None, name: str = "bin") -> Path:
    """A PATH directory with the tools the scripts use and, if given, `python3` (a wrapper, not a symlink:
    a symlink to a venv's python outside the venv would start the base interpreter)."""
    tools = tmp_path / name
    tools.mkdir()
    for tool in ("bash", "sh", "readlink", "dirname", "sha256sum", "mkdir", "cat", "tr", "grep", "sleep"):
        for folder in ("/usr/bin", "/bin"):
            if os.path.exists(f"{folder}/{tool}"):
                (tools / tool).symlink_to(f"{folder}/{tool}")
                break
    if python3 is not None:
        write_executable(tools / "python3", f'#!/bin/sh\nexec {shlex.quote(str(python3))} "$@"\n')
    return tools


def fake_uv(directory: Path, sleep: float = 0.0) -> Path:
    """A `uv` that builds quickly and offline: `uv venv` makes a venv without pip; `uv pip install` waits
    `sleep` seconds and links this interpreter's site-packages (which hold the dependencies) into it."""
    import sysconfig

    directory.mkdir(parents=True, exist_ok=True)
    site = sysconfig.get_paths()["purelib"]
    platsite = sysconfig.get_paths()["platlib"]
    script = f"""#!{sys.executable}
import os, subprocess, sys, time, glob
args = sys.argv[1:]
with open({str(directory / "uv-calls.log")!r}, "a") as log:
    log.write(" ".join(args) + "\\n")
if args[0] == "venv":
    python = args[args.index("--python") + 1]
    sys.exit(subprocess.run([python, "-m", "venv", "--without-pip", args[-1]]).returncode)
if args[:2] == ["pip", "install"]:
    time.sleep({sleep!r})
    python = args[args.index("--python") + 1]
    prefix = os.path.dirname(os.path.dirname(python))
    (site,) = glob.glob(os.path.join(prefix, "lib", "python*", "site-packages"))
    with open(os.path.join(site, "deps.pth"), "w") as pth:
        pth.write({site!r} + "\\n" + {platsite!r} + "\\n")
    sys.exit(0)
sys.exit(2)
"""
    return write_executable(directory / "uv", script)


def copy_plugin(tmp_path: Path) -> Path:
    """A copy of the plugin's scripts/ and hooks/ (to change requirements.lock without touching the repo)."""
    import shutil

    target = tmp_path / "plugin"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(PLUGIN_ROOT / "scripts", target / "scripts", ignore=ignore)
    shutil.copytree(PLUGIN_ROOT / "hooks", target / "hooks", ignore=ignore)
    return target


def open_phase(hooks: HookEnv, run: Run, number: int) -> None:
    """Open phase `number` of the run, ending each earlier phase `skipped` first (phases run in order)."""
    from fixloop.runs import phasebook

    for earlier in range(number):
        phasebook.phase_start(hooks.project, run.run_id, earlier)
        phasebook.phase_end(hooks.project, run.run_id, earlier, "skipped")
    phasebook.phase_start(hooks.project, run.run_id, number)
