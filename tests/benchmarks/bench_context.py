"""Added context: what loading fixloop costs every request of every session.

    python3 tests/benchmarks/bench_context.py [--runs N]

Runs a plain ``claude -p hi`` (the pinned CLI, tests/e2e/node_modules) against the scripted API twice in
each of N rounds: without a plugin and with ``--plugin-dir <repo>``, each in a fresh config directory, and
measures the FIRST ``/v1/messages`` request of each run:
- the JSON body, in characters (what the request carries in all);
- the system prompt (the top-level ``system`` blocks) plus Claude Code's ``role: "system"`` messages (the
  agent, skill and command listings go there), in characters.
Prints both sizes and their difference (the plugin's added context) with the target: under 4,000
characters. A difference that changes between rounds is printed as a range. Prints figures only; asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"
sys.path.insert(0, str(E2E))

from claude_runner import ClaudeRunner, require_claude_binary  # noqa: E402
from scripted_api import Reply, Rule, Script, ScriptedAPI, content_text, is_subagent, system_text  # noqa: E402

TARGET_CHARS = 4000


def sizes(body: dict[str, Any]) -> dict[str, int]:
    """Characters of the body, of its system prompt, and of its role: "system" messages."""
    system_messages = [
        m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "system"
    ]
    return {
        "body": len(json.dumps(body, ensure_ascii=False)),
        "system": len(system_text(body)),
        "system_messages": sum(len(content_text(m.get("content"))) for m in system_messages),
        "tools": len(json.dumps(body.get("tools", []), ensure_ascii=False)),
    }


def plugin_lines(body: dict[str, Any]) -> list[str]:
    """The lines of the role: "system" messages that name the plugin (its agents, skills, commands)."""
    return [
        line
        for message in body.get("messages", [])
        if isinstance(message, dict) and message.get("role") == "system"
        for line in content_text(message.get("content")).splitlines()
        if "- fixloop:" in line
    ]


def first_request(work: Path, plugin_dir: Path | None) -> dict[str, Any]:
    with ScriptedAPI(
        Script([Rule(name="hi", reply=Reply.text("hello"))]), log_path=work / "requests.jsonl"
    ) as api:
        runner = ClaudeRunner(
            require_claude_binary(),
            work,
            plugin_dir=plugin_dir,
            base_url=api.url,
            request_log=api.log_path,
            env={"FIXLOOP_NO_BUILD": "1"},  # no background environment build: it changes no request
        )
        project = runner.new_project()
        result = runner.run("hi", project_dir=project)
        if result.exit_code != 0 or result.result_text != "hello":
            raise SystemExit(f"claude -p hi failed: {json.dumps(result.summary(), indent=2)}")
        main = [r for r in api.message_requests() if not is_subagent(r.body)]
        return dict(main[0].body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3, help="rounds (each: one run without, one with)")
    parser.add_argument("--show", action="store_true", help="print the plugin's lines of the system messages")
    args = parser.parse_args()
    rows: dict[str, list[dict[str, int]]] = {"without": [], "with": []}
    listing: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fixloop-bench-context-", ignore_cleanup_errors=True) as tmp:
        for index in range(args.runs):
            for label, plugin in (("without", None), ("with", ROOT)):
                # equal-length names: the project path is part of the system prompt
                work = Path(tmp) / f"{'none' if plugin is None else 'repo'}-{index}"
                work.mkdir()
                request = first_request(work, plugin)
                rows[label].append(sizes(request))
                if plugin is not None and not listing:
                    listing = plugin_lines(request)

    def span(values: list[int]) -> str:
        low, high = min(values), max(values)
        return f"{low:,}" if low == high else f"{low:,}..{high:,}"

    print(f"first /v1/messages request of `claude -p hi`, {args.runs} run(s) each (characters)")
    print(f"{'':28}{'without plugin':>16}{'--plugin-dir':>16}{'added':>16}")
    for key, title in (
        ("body", "JSON body"),
        ("system", "system prompt"),
        ("system_messages", "role:system messages"),
        ("tools", "tools"),
    ):
        without = [row[key] for row in rows["without"]]
        with_plugin = [row[key] for row in rows["with"]]
        added = [b - a for a, b in zip(without, with_plugin, strict=True)]
        print(f"{title:28}{span(without):>16}{span(with_plugin):>16}{span(added):>16}")
    context = [
        (b["system"] + b["system_messages"]) - (a["system"] + a["system_messages"])
        for a, b in zip(rows["without"], rows["with"], strict=True)
    ]
    body = [b["body"] - a["body"] for a, b in zip(rows["without"], rows["with"], strict=True)]
    verdict = "met" if max(body) < TARGET_CHARS else "NOT met"
    print(f"added context (system + system messages): {span(context)} characters")
    print(f"added to the request body: {span(body)} characters; target < {TARGET_CHARS:,}: {verdict}")
    if args.show:
        total = sum(map(len, listing))
        print(f"\nthe plugin's {len(listing)} lines in the system messages ({total:,} characters):")
        for line in listing:
            print(f"{len(line):6}  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
