"""What orchestrating a review costs in model traffic: who sends the requests, and how much of it is the
coordinator's.

    python3 tests/benchmarks/bench_orchestration.py [--runs N] [--keep]

Each run is the happy path of tests/e2e/test_review_loop.py (``fixloop_model.happy_path``: two seeded defects
found in round 1, verified, fixed with two Edits, round 2 clean) with the real pinned CLI, the real plugin
and the scripted model, in a fresh copy of the sample project: ``claude -p "/fixloop:review --trust-config"``.
From the scripted API's request log it prints, per run:
- the model requests by role (the coordinator, the reviewers, the verifier, the fixer);
- the characters sent by role (the JSON bodies of those requests), and the coordinator's share of them;
- the coordinator's turns per review round (a turn counts for the round its Agent calls serve), and its
  final turn.
The plugin's environment is built once beforehand in a temporary data directory (or, when that fails, the
engine uses this interpreter through FIXLOOP_PYTHON). Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"
sys.path[:0] = [str(E2E), str(ROOT / "scripts" / "lib")]

from claude_runner import ClaudeRunner, require_claude_binary  # noqa: E402
from fixloop_model import CLI_PERMISSION_MODE, COORDINATOR, FixloopModel, happy_path  # noqa: E402
from fixloop_session import CHANGED_FILES, reply_tool_uses  # noqa: E402
from scripted_api import ScriptedAPI  # noqa: E402

from fixloop.core.agent_names import REVIEWER_AGENTS  # noqa: E402

ROLE_OF = {COORDINATOR: "coordinator", **dict.fromkeys(REVIEWER_AGENTS, "reviewers")}
ROUND = re.compile(r"round (\d+)")


def prepare_data(data: Path) -> dict[str, str]:
    """Build the plugin's environment in ``data`` once, as SessionStart would; the extra environment for
    the runs (FIXLOOP_PYTHON when the build is not possible here)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bootstrap.py"), "ensure", "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode == 0:
        return {}
    print(f"plugin environment not buildable here ({done.stdout.strip()}); FIXLOOP_PYTHON={sys.executable}")
    return {"FIXLOOP_PYTHON": sys.executable}


def one_run(work: Path, data: Path, extra_env: dict[str, str]) -> list[dict[str, Any]]:
    """The run's ``/v1/messages`` request log records."""
    model = FixloopModel(happy_path())
    with ScriptedAPI(model.script(), log_path=work / "requests.jsonl") as api:
        runner = ClaudeRunner(
            require_claude_binary(),
            work,
            base_url=api.url,
            request_log=api.log_path,
            timeout=300.0,
            shared_plugin_data=data,
            env=extra_env,
        )
        project = runner.new_project(uncommitted=CHANGED_FILES)
        result = runner.run(
            "/fixloop:review --trust-config", project_dir=project, permission_mode=CLI_PERMISSION_MODE
        )
    if result.exit_code != 0 or result.is_error or model.problems or api.unmatched:
        raise SystemExit(
            f"the run failed: {json.dumps(result.summary(), indent=2)}\nproblems: {model.problems}\n"
            f"unmatched: {len(api.unmatched)}"
        )
    return result.message_requests()


def turn_round(record: dict[str, Any]) -> str:
    """The review round a coordinator turn serves ("final" for its final message)."""
    descriptions = [str(use["input"]["description"]) for use in reply_tool_uses(record)]
    rounds = {m[1] for text in descriptions if (m := ROUND.search(text))}
    return f"round {min(rounds, key=int)}" if rounds else "final"


def show(records: list[dict[str, Any]], title: str) -> None:
    requests: Counter[str] = Counter()
    chars: Counter[str] = Counter()
    turns: Counter[str] = Counter()
    for record in records:
        role = ROLE_OF.get(str(record["rule"]), str(record["rule"]))
        requests[role] += 1
        chars[role] += len(json.dumps(record["body"], ensure_ascii=False))
        if role == "coordinator":
            turns[turn_round(record)] += 1
    total = sum(chars.values())
    print(f"\n{title}: {sum(requests.values())} model requests, {total:,} characters sent")
    print(f"  {'role':14} {'requests':>8} {'characters':>12} {'share':>7}")
    for role in sorted(requests, key=lambda r: -chars[r]):
        print(f"  {role:14} {requests[role]:8} {chars[role]:12,} {100 * chars[role] / total:6.1f}%")
    print(f"  the coordinator's share of the characters: {100 * chars['coordinator'] / total:.1f}%")
    print("  coordinator turns: " + ", ".join(f"{name} {count}" for name, count in sorted(turns.items())))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fixloop-bench-orchestration-"))
    try:
        data = work / "plugin-data"
        extra_env = prepare_data(data)
        for index in range(args.runs):
            run_dir = work / f"run-{index + 1}"
            run_dir.mkdir()
            show(one_run(run_dir, data, extra_env), f"run {index + 1}")
    finally:
        if args.keep:
            print(f"work directory kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
