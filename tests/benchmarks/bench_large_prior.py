"""Time and memory of the edit hook when a fixer edits a large file (its prior content is kept).

    python3 tests/benchmarks/bench_large_prior.py [--mb 200]

Makes a file of --mb MB (real data, no holes), opens a fix round on it, and runs the PreToolUse edit hook
as hooks/hooks.json runs it (its first touch copies and hashes the file), then the PostToolUse hook (which
hashes it), then a rollback. Prints wall seconds, CPU seconds and peak RSS of each hook process (measured
through child_usage's launcher), next to `python3 -S -c pass`. Claude Code kills the hook at 10 s; the
hook's memory should stay near the interpreter's, whatever the size. Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from child_usage import Launcher

ROOT = Path(__file__).resolve().parents[2]
HOOKS = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]


def edit_command(event: str) -> str:
    (entry,) = [e for e in HOOKS[event] if e.get("matcher") == "Edit|Write|MultiEdit|NotebookEdit"]
    command: str = entry["hooks"][0]["command"]
    return command


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mb", type=int, default=200)
    args = parser.parse_args()

    from fixloop.runs import creation
    from fixloop.store import edits, layout

    launcher = Launcher()
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp)
        project = base / "project"
        project.mkdir()
        large = project / "data.bin"
        block = os.urandom(1 << 20)
        with large.open("wb") as handle:
            for _ in range(args.mb):
                handle.write(block)
        data = base / "data"
        data.mkdir()
        (data / "python3-path").write_text(sys.executable + "\n")
        session = "bench-session"
        os.environ["CLAUDE_PROJECT_DIR"] = str(project)
        state = creation.start_run(
            "bugfix", root=project, stack="backend", changed_files=["data.bin"], claude_session_id=session
        )["state"]
        begun = edits.begin(project, Path(layout.run_dir(project, state["run_id"])), "round-1", ["data.bin"])
        env = {
            **os.environ,
            "CLAUDE_PLUGIN_ROOT": str(ROOT),
            "CLAUDE_PLUGIN_DATA": str(data),
            "CLAUDE_PROJECT_DIR": str(project),
            "CLAUDE_CODE_SESSION_ID": session,
        }
        print(f"file: {args.mb} MB")
        cpu, peak, _ = launcher.measure([sys.executable, "-S", "-c", "pass"], project, env)
        print(f"{'python3 -S -c pass':<28} cpu {cpu:6.2f} s  peak RSS {peak:7.1f} MB")
        for event in ("PreToolUse", "PostToolUse"):
            payload = {
                "session_id": session,
                "transcript_path": "/t",
                "cwd": str(project),
                "hook_event_name": event,
                "agent_id": "a1",
                "agent_type": "fixloop:implementer",
                "tool_name": "Write",
                "tool_input": {"file_path": str(large), "content": "x"},
                "tool_use_id": "toolu_1",
            }
            payload_file = base / f"{event}.json"
            payload_file.write_text(json.dumps(payload))
            command = f"{edit_command(event)} < '{payload_file}'"
            started = time.perf_counter()
            cpu, peak, code = launcher.measure(["sh", "-c", command], project, env)
            wall = time.perf_counter() - started
            print(
                f"{event + ' edit hook':<28} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
                f"peak RSS {peak:7.1f} MB  exit {code}"
            )
            if event == "PreToolUse":
                with large.open("r+b") as handle:
                    handle.write(b"edited")
        started = time.perf_counter()
        report = edits.rollback(begun)
        print(
            f"{'rollback (in process)':<28} wall {time.perf_counter() - started:6.2f} s  "
            f"restored {report['restored']}"
        )
    launcher.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
