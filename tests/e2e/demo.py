"""`/fixloop:review` in the real Claude Code CLI on a copy of the sample repository, shown step by step.

By default the model is SCRIPTED: a server on 127.0.0.1 answers as a model following fixloop's agents
would (tests/e2e/fixloop_model.py, the end-to-end tests' happy path). Claude Code, the plugin, its hooks
and the engine are all real. With --live (and ANTHROPIC_API_KEY set) the real model answers instead.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from claude_runner import REPO_ROOT, ClaudeRunner, require_claude_binary  # noqa: E402
from fixloop_model import CLI_PERMISSION_MODE, FixloopModel, happy_path  # noqa: E402
from fixloop_session import CHANGED_FILES, read_run  # noqa: E402
from scripted_api import ScriptedAPI  # noqa: E402


def show(title: str) -> None:
    print(f"\n==== {title}", flush=True)


def engine(project: Path, plugin_data: Path, *args: str) -> None:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_DATA": str(plugin_data)}
    subprocess.run([str(REPO_ROOT / "scripts" / "fixloop"), *args], cwd=project, env=env, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--live", action="store_true", help="use the real model (needs ANTHROPIC_API_KEY)")
    args = parser.parse_args(argv)
    if args.live and not os.environ.get("ANTHROPIC_API_KEY"):
        parser.error("--live needs ANTHROPIC_API_KEY in the environment")
    binary = require_claude_binary()
    with tempfile.TemporaryDirectory(prefix="fixloop-demo-") as scratch:
        work = Path(scratch)
        plugin_data = work / "plugin-data"
        plugin_data.mkdir()
        api: ScriptedAPI | None = None
        if not args.live:
            api = ScriptedAPI(
                FixloopModel(happy_path(1.0)).script(), log_path=work / "requests.jsonl"
            ).start()
        try:
            runner = ClaudeRunner(
                binary,
                work / "claude",
                plugin_dir=REPO_ROOT,
                base_url=api.url if api else None,
                request_log=api.log_path if api else None,
                timeout=900.0 if args.live else 180.0,
                shared_plugin_data=plugin_data,
                live=args.live,
            )
            project = runner.new_project(uncommitted=CHANGED_FILES)
            model = "the REAL model (--live)" if args.live else "a SCRIPTED model on 127.0.0.1"
            show(f"/fixloop:review on {project}, answered by {model}")
            print(f"The change under review: {', '.join(CHANGED_FILES)}")
            started = time.time()
            # --trust-config: the demo's throwaway project's verification commands are approved for this run.
            result = runner.run(
                "/fixloop:review --trust-config", project_dir=project, permission_mode=CLI_PERMISSION_MODE
            )
            print(f"Claude Code exited {result.exit_code} after {time.time() - started:.1f}s", end="")
            print(f" and {len(result.message_requests())} model requests" if api else "")
            record = read_run(project)
            show("Report (fixloop review report --format markdown --output report.md)")
            engine(
                project,
                plugin_data,
                "review",
                "report",
                record.run_id,
                "--format",
                "markdown",
                "--output",
                "report.md",
            )
            print((project / "report.md").read_text(encoding="utf-8"))
            show("Log timeline (fixloop log timeline)")
            engine(project, plugin_data, "log", "timeline", record.run_id)
            show("What changed in the project (git status)")
            subprocess.run(["git", "status", "--short"], cwd=project, check=False)
        finally:
            if api is not None:
                api.stop()
    if not args.live:
        print("\nThe model in this demo was scripted;", end=" ")
        print("Claude Code, the plugin, its hooks and the engine were real.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
