"""What the reviewers are told of the project's finding rules, so that they spend no tokens on findings the
engine would drop anyway: the accepted findings of the files they review, the categories turned off, the
lowest severity wanted."""

from __future__ import annotations

from collections.abc import Sequence

from fixloop.contracts.runconfig import RunConfig
from fixloop.review.filters import categories_off
from fixloop.runs.baseline import BaselineEntry

MAX_LISTED = 40
MAX_DESCRIPTION_CHARS = 160


def finding_rule_requirements(config: RunConfig, accepted_count: int) -> list[str]:
    """The task document's requirements for the finding rules that apply."""
    requirements: list[str] = []
    if accepted_count:
        requirements.append(
            f"Do not report the {accepted_count} finding(s) this project accepted (its baseline, listed in "
            "the prompt): fixloop drops them whatever you report."
        )
    off = categories_off(config)
    if off:
        requirements.append(f"Do not report findings of these categories (turned off): {', '.join(off)}.")
    if config.min_severity != "low":
        requirements.append(f"Only report findings of severity {config.min_severity} or higher.")
    return requirements


def _shorten(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_DESCRIPTION_CHARS else flat[: MAX_DESCRIPTION_CHARS - 3] + "..."


def accepted_lines(accepted: Sequence[BaselineEntry]) -> list[str]:
    """The prompt's list of accepted findings (file:line [category] description), at most MAX_LISTED."""
    if not accepted:
        return []
    ordered = sorted(accepted, key=lambda entry: (entry["file"], entry["line"], entry["category"]))
    lines = [
        "",
        "Accepted findings (the project's baseline): do not report these again, even where the code around "
        "them changed:",
        *(
            f"- {entry['file']}:{entry['line']} [{entry['category']}] {_shorten(entry['description'])}"
            for entry in ordered[:MAX_LISTED]
        ),
    ]
    if len(ordered) > MAX_LISTED:
        lines.append(f"- ... and {len(ordered) - MAX_LISTED} more in .fixloop/baseline.json")
    return lines
