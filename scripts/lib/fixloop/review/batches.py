"""Batches of bounded size: a round's fixable findings reach the verifier and the fixer in consecutive calls
of at most `max_findings_per_batch` findings each, in finding order.

A step (the round's `verifier` or `fix`) keeps only its batch number, the number of batches and the batch
size; a batch's ids are a slice of the ids the step works on. A step without these keys (a state written
before batches) is one batch of everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def batch_count(total: int, size: int) -> int:
    """How many batches of at most `size` hold `total` findings (at least one)."""
    return max(1, -(-total // max(1, size)))


def batch_fields(total: int, size: int) -> dict[str, int]:
    """The keys a step starts with: batch 1 of `batch_count(total, size)`."""
    return {"batch": 1, "batches": batch_count(total, size), "batch_size": max(1, size)}


def current_batch(ids: Sequence[str], step: Mapping[str, Any]) -> list[str]:
    """The ids of the step's current batch, in order."""
    size = int(step.get("batch_size") or len(ids) or 1)
    number = int(step.get("batch") or 1)
    return list(ids[(number - 1) * size : number * size])


def last_batch(step: Mapping[str, Any]) -> bool:
    return int(step.get("batch") or 1) >= int(step.get("batches") or 1)


def batch_text(step: Mapping[str, Any]) -> str:
    """ ", batch 2/3" for a step of several batches, "" for one batch."""
    batches = int(step.get("batches") or 1)
    return f", batch {int(step.get('batch') or 1)}/{batches}" if batches > 1 else ""
