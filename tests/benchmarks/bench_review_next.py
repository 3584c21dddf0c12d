"""How long `review next` takes to close a round of six reviewers, and how that grows with the issue count.

Run: python3 tests/benchmarks/bench_review_next.py
Prints, for 1k / 10k / 30k total issues (6 reviewers; a fifth of each reviewer's issues duplicate another
reviewer's, so merging has real work): the pure state-machine step (decide_next: merge, stable ids, fixable
selection), the same step on a state that already has ids from an earlier round (the cross-round matching
path), and the whole `review next` command as the CLI runs it (review.runner.apply_step: load state.json,
update under the lock with the garbage collector paused, write it back). No assertions: these are figures
to read.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

LIB = Path(__file__).resolve().parents[2] / "scripts" / "lib"

from fixloop.contracts.coordinator import LoopConfig  # noqa: E402
from fixloop.core.agent_names import REVIEWER_AGENTS  # noqa: E402
from fixloop.review.gate import attach_verification  # noqa: E402
from fixloop.review.machine import decide_next  # noqa: E402
from fixloop.review.record import record_agent_result  # noqa: E402
from fixloop.review.runner import apply_step  # noqa: E402
from fixloop.store.statestore import StateStore  # noqa: E402

WORDS = ("null", "await", "handle", "bound", "cast", "lock", "retry", "cache", "index", "parse")


def make_issue(agent_index: int, number: int, shared: bool) -> dict[str, Any]:
    key = number if shared else agent_index * 1_000_000 + number
    return {
        "id": f"{agent_index}-{number}",
        "severity": ("critical", "high", "medium", "low")[key % 4],
        "confidence": 60 + key % 40,
        "file": f"src/module_{key % 97}.py",
        "line": 1 + (key * 7) % 2000,
        "end_line": None,
        "category": ("bug", "error-handling", "style", "types")[key % 4],
        "rule": None,
        "description": f"Problem {WORDS[key % 10]} {WORDS[(key // 10) % 10]} {WORDS[(key // 100) % 10]} "
        f"in `func_{key}` variant {key // 1000}",
        "suggestion": "Do the right thing.",
        "auto_fixable": key % 3 != 0,
        "existing_code": None,
        "improved_code": None,
    }


def reviewing_state(total: int) -> dict[str, Any]:
    state: dict[str, Any] = {
        "run_id": "bench001",
        "workflow": "review",
        "status": "running",
        "created_at": "2025-01-01T00:00:00.000Z",
        "project_dir": "/tmp/bench",
        "changed_files": [f"src/module_{index}.py" for index in range(97)],
        "config": LoopConfig(use_verifier=False).model_dump(mode="json"),
        "phases": [0],
        "logging": {"enabled": False},
        "errors": [],
        "error_count": 0,
        "review": {},
    }
    state = decide_next(state, None, 1).state  # -> verify (initial gate)
    attach_verification(
        state,
        {"tests": {"status": "passed"}, "lint": {"status": "passed"}, "typecheck": {"status": "passed"}},
    )
    state = decide_next(state, None, 1).state  # -> review
    per_agent = total // len(REVIEWER_AGENTS)
    for agent_index, agent in enumerate(REVIEWER_AGENTS):
        issues = [make_issue(agent_index, number, shared=number % 5 == 0) for number in range(per_agent)]
        document = {"status": "success", "agent": agent, "issues": issues, "positive_observations": []}
        state = record_agent_result(state, agent, document, now_ms=2, inplace=True).state
    return state


def timed(fn: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def second_round_state(total: int) -> dict[str, Any]:
    """Round 1 closed and fixed; round 2 requested with the same findings shifted by 3 lines."""
    state = reviewing_state(total)
    state = decide_next(state, None, 3, inplace=True).state  # -> fix
    fixer = {"status": "success", "agent": "review-fixer", "results": [], "files_modified": []}
    state = record_agent_result(state, "review-fixer", fixer, now_ms=4, inplace=True).state
    state = decide_next(state, None, 5, inplace=True).state  # -> verify
    attach_verification(
        state,
        {"tests": {"status": "passed"}, "lint": {"status": "passed"}, "typecheck": {"status": "passed"}},
    )
    state = decide_next(state, None, 6, inplace=True).state  # -> review round 2
    per_agent = total // len(REVIEWER_AGENTS)
    for agent_index, agent in enumerate(REVIEWER_AGENTS):
        issues = []
        for number in range(per_agent):
            item = make_issue(agent_index, number, shared=number % 5 == 0)
            item["line"] += 3
            issues.append(item)
        document = {"status": "success", "agent": agent, "issues": issues, "positive_observations": []}
        state = record_agent_result(state, agent, document, now_ms=7, inplace=True).state
    return state


def main() -> None:
    header = ("total issues", "merged", "decide_next", "round 2", "CLI next", "state MB")
    print(" ".join(f"{name:>{width}}" for name, width in zip(header, (12, 8, 12, 10, 10, 9), strict=True)))
    baseline: float | None = None
    for total in (1_000, 10_000, 30_000):
        state = reviewing_state(total)
        pure, transition = timed(lambda state=state: decide_next(state, None, 3, inplace=True))
        merged = len(transition.state["review"]["rounds"][0]["issues"])
        later = second_round_state(total)
        round_two, _ = timed(lambda later=later: decide_next(later, None, 8, inplace=True))
        with tempfile.TemporaryDirectory() as directory:
            store = StateStore(Path(directory) / "state.json")
            store.create(reviewing_state(total))

            def cli_next(store: StateStore = store) -> dict[str, Any]:
                _saved, transition = apply_step(
                    store,
                    lambda current: decide_next(current, None, 3, inplace=True),
                    "review_next",
                )
                return transition.document

            whole, document = timed(cli_next)
            size = store.path.stat().st_size / 1e6
        assert document["action"] == "fix"
        per_issue = whole / total * 1e6
        baseline = baseline or per_issue
        print(
            f"{total:>12,} {merged:>8,} {pure * 1000:>10.0f}ms {round_two * 1000:>8.0f}ms "
            f"{whole * 1000:>8.0f}ms {size:>8.1f}  "
            f"({per_issue:.0f} us/issue, x{per_issue / baseline:.2f} of 1k)"
        )
    print(
        json.dumps(
            {"note": "CLI next = read + deepcopy + decide_next + encode + atomic write, no process start"}
        )
    )


if __name__ == "__main__":
    main()
