"""Written plans for /fixloop:execute-plan (format: docs/plan-format.md): parsed, checked, batched, marked.

Standard library only; imports fixloop.core alone.
"""

from fixloop.plans.batching import batches, execution_order, resume_point
from fixloop.plans.loading import MAX_PLAN_BYTES, load, read_text
from fixloop.plans.marking import mark_done
from fixloop.plans.model import Plan, Task
from fixloop.plans.parser import MAX_PLAN_TASKS, parse
from fixloop.plans.rendering import render
from fixloop.plans.validation import Finding, Validation, validate

__all__ = [
    "MAX_PLAN_BYTES",
    "MAX_PLAN_TASKS",
    "Finding",
    "Plan",
    "Task",
    "Validation",
    "batches",
    "execution_order",
    "load",
    "mark_done",
    "parse",
    "read_text",
    "render",
    "resume_point",
    "validate",
]
