"""Run the pinned Claude Code CLI against a throwaway project, and read back what happened.

Scripted mode (the default): the CLI talks to a :class:`scripted_api.ScriptedAPI` on 127.0.0.1 whose URL the
caller passes in. Live mode (``live=True``, or ``FIXLOOP_E2E_LIVE=1`` for the command line): no scripted
server; the CLI uses the real API with the caller's ``ANTHROPIC_API_KEY`` (for the demo, never in tests).

Every run gets a fresh ``CLAUDE_CONFIG_DIR``; the child's environment is the caller's minus every
``ANTHROPIC_*``/``CLAUDE*`` variable (so a test run inside a Claude Code session cannot leak into it), plus
what the mode needs. The CLI runs as
``claude -p PROMPT --plugin-dir DIR --output-format stream-json --verbose --include-hook-events``.

Command line (handy for the demo and for poking at the CLI)::

    python tests/e2e/claude_runner.py --script my_scripts:SCRIPT "/fixloop:review"
    FIXLOOP_E2E_LIVE=1 python tests/e2e/claude_runner.py "/fixloop:review" --keep
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripted_api import ScriptedAPI, is_messages_call, load_script, read_request_log

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parent.parent
SAMPLE_REPO = E2E_DIR / "sample_repo"
PINNED_VERSION = "2.1.332"
BIN_ENV = "FIXLOOP_CLAUDE_BIN"
LIVE_ENV = "FIXLOOP_E2E_LIVE"
DEFAULT_TIMEOUT = 180.0
# The npm package's bin/claude.exe is a ~500-byte shell stub until its postinstall copies the native binary
# over it; anything this small is the stub.
STUB_MAX_BYTES = 1_000_000
_DROPPED_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE")
_DROPPED_ENV = {"IS_SANDBOX", "DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY"}
_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "fixloop e2e",
    "GIT_AUTHOR_EMAIL": "e2e@fixloop.invalid",
    "GIT_COMMITTER_NAME": "fixloop e2e",
    "GIT_COMMITTER_EMAIL": "e2e@fixloop.invalid",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z",
}


# The seeded defects of the sample project, for scripting reviewer findings that point at real lines.
# tests/e2e/test_scripted_api.py checks that each `snippet` is on its `line`.
SAMPLE_DEFECTS: tuple[dict[str, Any], ...] = (
    {
        "id": "swallowed-error",
        "file": "inventory/stock.py",
        "line": 14,
        "snippet": "except Exception:",
        "category": "silent-failure",
        "reviewer": "silent-failure-hunter",
        "description": "load_stock returns {} on any error: an unreadable file looks like empty stock",
    },
    {
        "id": "misleading-comment",
        "file": "inventory/stock.py",
        "line": 27,
        "snippet": "# Raises KeyError when the SKU is not in stock.",
        "category": "comment",
        "reviewer": "comment-analyzer",
        "description": "the comment says KeyError is raised, but an unknown SKU is treated as 0 and clamped",
    },
    {
        "id": "duplicated-total",
        "file": "inventory/report.py",
        "line": 18,
        "snippet": "total = 0",
        "category": "duplication",
        "reviewer": "code-simplifier",
        "description": "low_stock_summary repeats total_units' loop instead of calling it",
    },
    {
        "id": "untested-summary",
        "file": "inventory/report.py",
        "line": 15,
        "snippet": "def low_stock_summary(",
        "category": "test-coverage",
        "reviewer": "test-analyzer",
        "description": "low_stock_summary has no test",
    },
)
SAMPLE_SOURCE_FILES = ("inventory/report.py", "inventory/stock.py")


class ClaudeNotInstalled(RuntimeError):
    """The pinned CLI is not installed (run ``npm ci --prefix tests/e2e``) or FIXLOOP_CLAUDE_BIN is wrong."""


# --------------------------------------------------------------------------------------------------
# The binary
# --------------------------------------------------------------------------------------------------


def _platform_package_dirs(modules: Path) -> Iterator[Path]:
    scope = modules / "@anthropic-ai"
    if scope.is_dir():
        yield from sorted(p for p in scope.iterdir() if p.name.startswith("claude-code-"))


def _is_native(path: Path) -> bool:
    try:
        return path.is_file() and os.access(path, os.X_OK) and path.stat().st_size > STUB_MAX_BYTES
    except OSError:
        return False


def find_claude_binary(
    environ: Mapping[str, str] | None = None, modules: Path = E2E_DIR / "node_modules"
) -> Path | None:
    """The CLI to run: ``$FIXLOOP_CLAUDE_BIN`` when set (it must be an executable file), else the pinned
    install in ``modules`` (tests/e2e/node_modules). When the postinstall did not run (``--ignore-scripts``)
    and ``.bin/claude`` is still the stub, the platform package's binary is used directly. None when there
    is none."""
    env = os.environ if environ is None else environ
    explicit = env.get(BIN_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        return path.resolve() if path.is_file() and os.access(path, os.X_OK) else None
    linked = modules / ".bin" / "claude"
    if _is_native(linked):
        return linked.resolve()
    for package in _platform_package_dirs(modules):
        for name in ("claude", "claude.exe"):
            if _is_native(package / name):
                return package / name
    return None


def require_claude_binary(environ: Mapping[str, str] | None = None) -> Path:
    found = find_claude_binary(environ)
    if found is None:
        env = os.environ if environ is None else environ
        where = env.get(BIN_ENV) or str(E2E_DIR / "node_modules" / ".bin" / "claude")
        raise ClaudeNotInstalled(f"Claude Code CLI not found at {where}; run: npm ci --prefix tests/e2e")
    return found


def claude_version(binary: Path) -> str:
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip()


# --------------------------------------------------------------------------------------------------
# Projects and environment
# --------------------------------------------------------------------------------------------------


def git(project: Path, *args: str) -> str:
    """Run git in ``project`` (no user or system git config; fixed identity and dates); its stdout."""
    env = (
        {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        | _GIT_IDENTITY
        | {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    )
    done = subprocess.run(
        ["git", *args], cwd=project, env=env, check=True, capture_output=True, text=True, timeout=60
    )
    return done.stdout


def make_project(dest: Path, source: Path = SAMPLE_REPO, *, uncommitted: Sequence[str] = ()) -> Path:
    """Copy ``source`` (default: the sample project) to ``dest`` (which must not exist) and make it a git
    repository on branch ``main`` with one commit holding every file except ``uncommitted`` (repo-relative
    paths left as untracked files, i.e. the change under review). Deterministic author and dates."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache", ".ruff_cache")
    shutil.copytree(source, dest, ignore=ignore)
    git(dest, "init", "-q", "-b", "main")
    # Repository-local identity: Claude Code reads `git config user.name` for the git status it sends.
    git(dest, "config", "user.name", _GIT_IDENTITY["GIT_AUTHOR_NAME"])
    git(dest, "config", "user.email", _GIT_IDENTITY["GIT_AUTHOR_EMAIL"])
    git(dest, "config", "commit.gpgsign", "false")
    git(dest, "add", "-A")
    for path in uncommitted:
        git(dest, "rm", "-q", "--cached", "--", path)
    git(dest, "commit", "-q", "--allow-empty", "-m", "sample project")
    return dest


def plugin_name(plugin_dir: Path) -> str:
    """The ``name`` in the plugin's ``.claude-plugin/plugin.json``."""
    manifest = json.loads((plugin_dir / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    return str(manifest["name"])


def child_env(
    *,
    config_dir: Path,
    base_url: str | None,
    live: bool = False,
    sandbox: bool = False,
    extra: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The CLI's environment. Scripted: ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY=sk-test. Live: the
    caller's ANTHROPIC_API_KEY (required) and no base URL override. Both: a fresh CLAUDE_CONFIG_DIR and
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1. ``sandbox`` sets IS_SANDBOX=1 (needed for
    ``--dangerously-skip-permissions`` as root)."""
    source = dict(os.environ if environ is None else environ)
    env = {
        k: v for k, v in source.items() if not k.startswith(_DROPPED_ENV_PREFIXES) and k not in _DROPPED_ENV
    }
    env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    if live:
        key = source.get("ANTHROPIC_API_KEY")
        if not key:
            raise RuntimeError("live mode needs ANTHROPIC_API_KEY in the environment")
        env["ANTHROPIC_API_KEY"] = key
    else:
        if not base_url:
            raise ValueError("scripted mode needs the scripted API's base_url")
        if not base_url.startswith(("http://127.0.0.1:", "http://localhost:")):
            raise ValueError(f"scripted mode only talks to a local server, not {base_url}")
        env["ANTHROPIC_BASE_URL"] = base_url
        env["ANTHROPIC_API_KEY"] = "sk-test"
    if sandbox:
        env["IS_SANDBOX"] = "1"
    env.update(extra or {})
    return env


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------


def parse_stream(stdout: str) -> tuple[list[dict[str, Any]], list[str]]:
    """stream-json output as records; lines that are not JSON objects are returned separately."""
    records: list[dict[str, Any]] = []
    other: list[str] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            other.append(line)
            continue
        if isinstance(value, dict):
            records.append(value)
        else:
            other.append(line)
    return records, other


def _hook_event(record: Mapping[str, Any]) -> str | None:
    event = record.get("hook_event") or record.get("hook_event_name")
    return str(event) if event is not None else None


@dataclass
class RunResult:
    command: list[str]
    exit_code: int | None  # None: killed on timeout
    timed_out: bool
    duration_s: float
    stdout: str
    stderr: str
    records: list[dict[str, Any]]  # every stream-json record, in order
    unparsed_lines: list[str]
    project_dir: Path
    config_dir: Path
    plugin_dir: Path | None
    request_log: Path | None
    requests: list[dict[str, Any]] = field(default_factory=list)  # request log records (scripted mode)

    @property
    def result(self) -> dict[str, Any] | None:
        """The last ``type: "result"`` record."""
        found = [r for r in self.records if r.get("type") == "result"]
        return found[-1] if found else None

    @property
    def result_text(self) -> str | None:
        result = self.result
        value = result.get("result") if result else None
        return value if isinstance(value, str) else None

    @property
    def is_error(self) -> bool:
        result = self.result
        return result is None or bool(result.get("is_error"))

    @property
    def session_id(self) -> str | None:
        for record in self.records:
            if record.get("session_id"):
                return str(record["session_id"])
        return None

    @property
    def init(self) -> dict[str, Any] | None:
        """The ``system``/``init`` record (tools, agents, slash commands, plugins as the CLI loaded them)."""
        for record in self.records:
            if record.get("type") == "system" and record.get("subtype") == "init":
                return record
        return None

    @property
    def hook_records(self) -> list[dict[str, Any]]:
        """``hook_started`` / ``hook_response`` records, in order."""
        return [
            r
            for r in self.records
            if r.get("type") == "system" and str(r.get("subtype", "")).startswith("hook_")
        ]

    def hook_responses(self, event: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.hook_records
            if r.get("subtype") == "hook_response" and (event is None or _hook_event(r) == event)
        ]

    def hook_starts(self, event: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.hook_records
            if r.get("subtype") == "hook_started" and (event is None or _hook_event(r) == event)
        ]

    def message_requests(self) -> list[dict[str, Any]]:
        """Request log records of ``POST /v1/messages`` calls (count_tokens excluded)."""
        return [r for r in self.requests if is_messages_call(str(r.get("method")), str(r.get("path", "")))]

    def summary(self) -> dict[str, Any]:
        result = self.result or {}
        return {
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "duration_s": round(self.duration_s, 3),
            "is_error": self.is_error,
            "result": self.result_text,
            "num_turns": result.get("num_turns"),
            "requests": len(self.message_requests()),
            "hooks": [
                {
                    "event": _hook_event(r),
                    "name": r.get("hook_name"),
                    "exit_code": r.get("exit_code"),
                    "outcome": r.get("outcome"),
                }
                for r in self.hook_responses()
            ],
            "project_dir": str(self.project_dir),
            "config_dir": str(self.config_dir),
            "request_log": str(self.request_log) if self.request_log else None,
            "stderr_tail": self.stderr[-2000:],
        }


# --------------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------------


@dataclass
class ClaudeRunner:
    """Runs ``claude -p`` with a plugin directory. One runner per test; each :meth:`run` gets a fresh config
    directory under ``work_dir`` unless one is passed.

    ``shared_plugin_data``: a directory every run's ``${CLAUDE_PLUGIN_DATA}`` points at (a symlink at
    ``<config>/plugins/data/<plugin>-inline``, where Claude Code 2.1.328 keeps a ``--plugin-dir`` plugin's
    data), so what the plugin builds there once (its Python environment) is reused instead of rebuilt in
    every fresh config directory. ``env``: extra variables for every run."""

    binary: Path
    work_dir: Path
    plugin_dir: Path | None = REPO_ROOT
    base_url: str | None = None
    request_log: Path | None = None
    live: bool = False
    timeout: float = DEFAULT_TIMEOUT
    shared_plugin_data: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    _runs: int = field(default=0, init=False)

    def new_config_dir(self) -> Path:
        self._runs += 1
        path = self.work_dir / f"claude-config-{self._runs}"
        path.mkdir(parents=True, exist_ok=False)
        if self.shared_plugin_data is not None and self.plugin_dir is not None:
            self.shared_plugin_data.mkdir(parents=True, exist_ok=True)
            data = path / "plugins" / "data"
            data.mkdir(parents=True)
            (data / f"{plugin_name(self.plugin_dir)}-inline").symlink_to(self.shared_plugin_data.resolve())
        return path

    def new_project(
        self, source: Path = SAMPLE_REPO, name: str = "project", *, uncommitted: Sequence[str] = ()
    ) -> Path:
        return make_project(self.work_dir / name, source, uncommitted=uncommitted)

    def command(
        self,
        prompt: str,
        *,
        allowed_tools: Sequence[str] = (),
        permission_mode: str | None = None,
        extra_args: Sequence[str] = (),
    ) -> list[str]:
        argv = [str(self.binary), "-p", prompt]
        if self.plugin_dir is not None:
            argv += ["--plugin-dir", str(self.plugin_dir)]
        argv += ["--output-format", "stream-json", "--verbose", "--include-hook-events"]
        if allowed_tools:
            argv += ["--allowedTools", *allowed_tools]
        if permission_mode:
            argv += ["--permission-mode", permission_mode]
        return argv + list(extra_args)

    def run(
        self,
        prompt: str,
        *,
        project_dir: Path,
        allowed_tools: Sequence[str] = (),
        permission_mode: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        config_dir: Path | None = None,
        timeout: float | None = None,
        sandbox: bool = False,
    ) -> RunResult:
        config = config_dir or self.new_config_dir()
        child = child_env(
            config_dir=config,
            base_url=self.base_url,
            live=self.live,
            sandbox=sandbox,
            extra={**self.env, **(env or {})},
        )
        argv = self.command(
            prompt, allowed_tools=allowed_tools, permission_mode=permission_mode, extra_args=extra_args
        )
        # Only this run's requests: the log may be shared by several runs of one server.
        log_start = self.request_log.stat().st_size if self.request_log and self.request_log.exists() else 0
        started = time.monotonic()
        timed_out = False
        process = subprocess.Popen(
            argv,
            cwd=project_dir,
            env=child,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout or self.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
            stdout, stderr = process.communicate()
        duration = time.monotonic() - started
        records, other = parse_stream(stdout)
        requests = read_request_log(self.request_log, offset=log_start) if self.request_log else []
        return RunResult(
            command=argv,
            exit_code=None if timed_out else process.returncode,
            timed_out=timed_out,
            duration_s=duration,
            stdout=stdout,
            stderr=stderr,
            records=records,
            unparsed_lines=other,
            project_dir=project_dir,
            config_dir=config,
            plugin_dir=self.plugin_dir,
            request_log=self.request_log,
            requests=requests,
        )


def _kill_group(process: subprocess.Popen[str]) -> None:
    """Kill the CLI and whatever it started (it runs in its own session, so its group id is its pid)."""
    try:
        os.killpg(process.pid, 9)
    except (ProcessLookupError, PermissionError):
        process.kill()


# --------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no", "off")


@contextmanager
def _scripted_server(spec: str, log_path: Path) -> Iterator[str]:
    with ScriptedAPI(load_script(spec), log_path=log_path) as api:
        yield api.url


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the pinned Claude Code CLI on a copy of a project.")
    parser.add_argument("prompt")
    parser.add_argument(
        "--script", help="module:attr or file.py:attr of a scripted_api.Script (scripted mode)"
    )
    parser.add_argument(
        "--live",
        action="store_true",
        default=_truthy(os.environ.get(LIVE_ENV)),
        help=f"use the real API with $ANTHROPIC_API_KEY (also ${LIVE_ENV}=1)",
    )
    parser.add_argument("--project", type=Path, default=SAMPLE_REPO, help="source project to copy")
    parser.add_argument(
        "--uncommitted", nargs="*", default=[], help="project files to leave out of the commit"
    )
    parser.add_argument("--plugin-dir", type=Path, default=REPO_ROOT)
    parser.add_argument("--allowed-tools", nargs="*", default=[])
    parser.add_argument("--model", help="--model for the CLI (live mode)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    parser.add_argument("--keep", action="store_true", help="keep the work directory and print its path")
    parser.add_argument("--records", action="store_true", help="print every stream-json record too")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not args.live and not args.script:
        parser.error("give --script module:attr, or --live for the real API")
    if args.live and not os.environ.get("ANTHROPIC_API_KEY"):
        parser.error("--live needs ANTHROPIC_API_KEY in the environment")
    try:
        binary = require_claude_binary()
    except ClaudeNotInstalled as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="fixloop-e2e-"))
    try:
        with ExitStack() as stack:
            log = None if args.live else work / "requests.jsonl"
            base_url = None if log is None else stack.enter_context(_scripted_server(args.script, log))
            runner = ClaudeRunner(
                binary,
                work,
                plugin_dir=args.plugin_dir,
                base_url=base_url,
                request_log=log,
                live=args.live,
                timeout=args.timeout,
            )
            project = runner.new_project(args.project, uncommitted=args.uncommitted)
            result = runner.run(
                args.prompt,
                project_dir=project,
                allowed_tools=args.allowed_tools,
                extra_args=["--model", args.model] if args.model else [],
            )
        if args.records:
            for record in result.records:
                print(json.dumps(record))
        print(json.dumps(result.summary(), indent=2))
        return 0 if result.exit_code == 0 and not result.is_error else 1
    finally:
        if args.keep:
            print(f"work directory kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
