"""What orchestrating a review costs in model traffic: who sends the requests, and how much of it is the
coordinator's.

    python3 tests/benchmarks/bench_orchestration.py [--runs N] [--keep]

Each run is the happy path of tests/e2e/test_review_loop.py (``fixloop_model.happy_path``: two seeded defects
found in round 1, verified, fixed with two Edits, round 2 clean) with the real pinned CLI, the real plugin
and the scripted model, in a fresh copy of the sample project: ``claude -p "/fixloop:review --trust-config"``.
From the scripted API's request log it prints, per run:
- the model requests by role (the coordinator, the reviewers, the verifier, the fixer);
- the characters sent by role (the JSON bodies of those requests) and the tokens by role (input and output
  tokens as the scripted API reported them to Claude Code), and the coordinator's share of each;
- the coordinator's turns per review round (a turn counts for the round its Agent calls serve), and its
  final turn;
- the CLI's wall time, and the tokens the run's own report accounts for (``fixloop review report``), with
  the coordinator's share of the estimated cost;
- who wrote the coordinator's characters: fixloop (its agent file, the engine's blocks and result lines, the
  agent calls the model copies from them, its agents' descriptions in the agent list) or Claude Code (its
  system prompt, the Agent tool's schema, the context it attaches, the wrapper of every agent result, the
  JSON around it all); and the share the coordinator would still have if fixloop's part were nothing;
then the issue's goals (coordinator turns per round <= 3, down from ~9.5; coordinator share of characters
sent <= 15%, down from 70%) against the medians of the runs.
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
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"
sys.path[:0] = [str(E2E), str(ROOT / "scripts" / "lib")]

from claude_runner import ClaudeRunner, require_claude_binary  # noqa: E402
from fixloop_model import (  # noqa: E402
    AGENT_FILES,
    CLI_PERMISSION_MODE,
    COORDINATOR,
    START_CONTEXT,
    FixloopModel,
    happy_path,
)
from fixloop_session import CHANGED_FILES, read_run, reply_tool_uses, reply_usage, run_engine  # noqa: E402
from scripted_api import ScriptedAPI, content_text, messages, subagent_report  # noqa: E402

from fixloop.core.agent_names import REVIEWER_AGENTS  # noqa: E402

ROLE_OF = {COORDINATOR: "coordinator", **dict.fromkeys(REVIEWER_AGENTS, "reviewers")}
ROUND = re.compile(r"round (\d+)")
AGENT_LIST = "Available agent types for the Agent tool:"
CALL_FIELDS = ("subagent_type", "description", "prompt")
ENVIRONMENT = "\n\n# Environment\n"  # Claude Code appends it to a subagent's first hook context


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


@dataclass
class Run:
    requests: list[dict[str, Any]]  # the ``/v1/messages`` request log records
    wall_s: float
    report: dict[str, Any]  # `fixloop review report RUN --format json`


def one_run(work: Path, data: Path, extra_env: dict[str, str]) -> Run:
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
    run_id = read_run(project).run_id
    code, report = run_engine(project, "review", "report", run_id, plugin_data=data)
    if code != 0:
        raise SystemExit(f"fixloop review report {run_id} failed: {report}")
    return Run(result.message_requests(), result.duration_s, dict(report))


def turn_round(record: dict[str, Any]) -> str:
    """The review round a coordinator turn serves ("final" for its final message)."""
    descriptions = [str(use["input"]["description"]) for use in reply_tool_uses(record)]
    rounds = {m[1] for text in descriptions if (m := ROUND.search(text))}
    return f"round {min(rounds, key=int)}" if rounds else "final"


def sent(text: str) -> int:
    """The characters ``text`` takes in a request body as sent (JSON-escaped, without its quotes)."""
    return len(json.dumps(text, ensure_ascii=False)) - 2


def fixloop_chars(body: dict[str, Any], agent_body: str) -> int:
    """The characters of a coordinator request that fixloop wrote or decides: its agent file's body, the
    engine's text (the command's start line, the first block, each agent result as the hook rewrote it),
    the fields of each Agent call (the model copies them from a block) and fixloop's lines of the agent
    list. The rest of the request is Claude Code's."""
    count = sum(
        sent(agent_body) for block in body.get("system") or [] if agent_body in str(block.get("text"))
    )
    for message in messages(body):
        parts = message.get("content")
        for part in parts if isinstance(parts, list) else [{"type": "text", "text": str(parts)}]:
            text = str(part.get("text") or "")
            if part.get("type") == "tool_use":
                count += sum(sent(str(part["input"].get(key, ""))) for key in CALL_FIELDS)
            elif part.get("type") == "tool_result":
                report = subagent_report(content_text(part.get("content")))
                count += sent(report) if report is not None else 0
            elif text.startswith(START_CONTEXT):
                count += sent(text[len(START_CONTEXT) :].split(ENVIRONMENT, 1)[0])
            elif text.startswith(AGENT_LIST):
                count += sum(sent(line) + 2 for line in text.splitlines() if line.startswith("- fixloop:"))
            elif text.startswith("fixloop run "):
                count += sent(text.split("\n\nARGUMENTS:", 1)[0])
    return count


def show(run: Run, title: str) -> dict[str, float]:
    """Print the run's figures; the ones the issue sets goals for."""
    requests: Counter[str] = Counter()
    chars: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    turns: Counter[str] = Counter()
    by_fixloop = 0
    agent_body = AGENT_FILES[COORDINATOR].body.strip()
    for record in run.requests:
        role = ROLE_OF.get(str(record["rule"]), str(record["rule"]))
        requests[role] += 1
        chars[role] += len(json.dumps(record["body"], ensure_ascii=False))
        usage = reply_usage(record)
        tokens[role] += usage["input_tokens"] + usage["output_tokens"]
        if role == "coordinator":
            turns[turn_round(record)] += 1
            by_fixloop += fixloop_chars(record["body"], agent_body)
    total_chars, total_tokens = sum(chars.values()), sum(tokens.values())
    print(
        f"\n{title}: {sum(requests.values())} model requests, {total_chars:,} characters sent, "
        f"{total_tokens:,} tokens, {run.wall_s:.1f} s wall time"
    )
    print(f"  {'role':14} {'requests':>8} {'characters':>12} {'share':>7} {'tokens':>9} {'share':>7}")
    for role in sorted(requests, key=lambda r: -chars[r]):
        print(
            f"  {role:14} {requests[role]:8} {chars[role]:12,} {100 * chars[role] / total_chars:6.1f}%"
            f" {tokens[role]:9,} {100 * tokens[role] / total_tokens:6.1f}%"
        )
    chars_share = 100 * chars["coordinator"] / total_chars
    tokens_share = 100 * tokens["coordinator"] / total_tokens
    print(
        f"  the coordinator's share: {chars_share:.1f}% of the characters, {tokens_share:.1f}% of the tokens"
    )
    rounds = sorted(name for name in turns if name != "final")
    per_round = sum(turns[name] for name in rounds) / max(1, len(rounds))
    print(
        "  coordinator turns: "
        + ", ".join(f"{name} {turns[name]}" for name in [*rounds, "final"])
        + f" ({per_round:.1f} per round)"
    )
    by_claude_code = chars["coordinator"] - by_fixloop
    floor = 100 * by_claude_code / (total_chars - by_fixloop)
    print(
        f"  the coordinator's characters: {by_fixloop:,} fixloop's, {by_claude_code:,} Claude Code's own;"
        f" with none of fixloop's, its share would still be {floor:.1f}%"
    )
    usage = run.report.get("usage") or {}
    accounted = (usage.get("total") or {}).get("total_tokens", 0)
    by_agent = usage.get("by_agent") or {}
    cost = float((usage.get("total") or {}).get("cost_usd") or 0.0)
    coordinator_cost = float((by_agent.get(COORDINATOR) or {}).get("cost_usd") or 0.0)
    cost_share = 100 * coordinator_cost / cost if cost else 0.0
    print(
        f"  the run's report accounts for {accounted:,} tokens "
        f"({100 * accounted / total_tokens:.1f}% of those sent and received), "
        f"{len(by_agent)} agents, estimated ${cost:.4f}, the coordinator's share {cost_share:.1f}%"
    )
    return {
        "turns_per_round": per_round,
        "chars_share": chars_share,
        "tokens_share": tokens_share,
        "floor_share": floor,
        "cost_share": cost_share,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fixloop-bench-orchestration-"))
    try:
        data = work / "plugin-data"
        extra_env = prepare_data(data)
        figures = []
        for index in range(args.runs):
            run_dir = work / f"run-{index + 1}"
            run_dir.mkdir()
            figures.append(show(one_run(run_dir, data, extra_env), f"run {index + 1}"))
        turns = median(f["turns_per_round"] for f in figures)
        share = median(f["chars_share"] for f in figures)
        tokens = median(f["tokens_share"] for f in figures)
        print(f"\nmedian of {len(figures)} run(s), against the goals of the issue (before: ~9.5 turns, 70%):")
        print(
            f"  coordinator turns per round  {turns:5.1f}  goal <= 3    {'met' if turns <= 3 else 'NOT met'}"
        )
        print(
            f"  coordinator share of chars   {share:5.1f}% goal <= 15%  {'met' if share <= 15 else 'NOT met'}"
        )
        print(f"  coordinator share of tokens  {tokens:5.1f}%")
        print(f"  ... with none of fixloop's   {median(f['floor_share'] for f in figures):5.1f}%")
        print(f"  coordinator share of cost    {median(f['cost_share'] for f in figures):5.1f}%")
    finally:
        if args.keep:
            print(f"work directory kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
