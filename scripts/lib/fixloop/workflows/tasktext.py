"""Pieces of the agents' task texts shared by the workflows: failures as numbered blocks, JSON, and the
sections a task is made of (what to do, the inputs, the contract its answer follows)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.contracts.prompt_text import contract_text


def failures_text(failures: Sequence[Mapping[str, Any]], detail_lines: int) -> str:
    """The failures as numbered blocks: id, kind and place, message, then the first `detail_lines` lines."""
    if not failures:
        return "(none: the tests did not show the failure)"
    blocks = []
    for number, failure in enumerate(failures, 1):
        where = failure.get("file") or "?"
        if failure.get("line"):
            where += f":{failure['line']}"
        lines = [f"{number}. {failure.get('test_id')} ({failure.get('kind')}) at {where}"]
        lines.append(f"   {failure.get('message')}")
        details = str(failure.get("details") or "").splitlines()[:detail_lines]
        lines += [f"   | {line}" for line in details]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def json_text(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False)


def sections(what: Sequence[str], inputs: Sequence[tuple[str, str]], kind: str) -> str:
    """The task: what to do, one `## title` section per input, then the answer's contract."""
    parts = ["\n".join(what)]
    parts += [f"## {title}\n{body}" for title, body in inputs]
    parts.append(f"## Your answer\n{contract_text(kind)}")
    return "\n\n".join(parts)
