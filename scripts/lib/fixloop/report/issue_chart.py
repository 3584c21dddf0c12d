"""The HTML report's chart: issues per review round (found, fixed, introduced) as an inline SVG bar chart.

Each bar and its number carry `data-round`, `data-series` and `data-value`, so a reader (or a test) can
take the figures from the page itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

SERIES: tuple[tuple[str, str], ...] = (("found", "Found"), ("fixed", "Fixed"), ("introduced", "Introduced"))
BAR_WIDTH = 22
BAR_GAP = 4
GROUP_GAP = 36
PLOT_HEIGHT = 160
LEFT = 44
TOP = 28
BOTTOM = 40
LEGEND_STEP = 96


@dataclass(frozen=True)
class RoundCounts:
    round: int
    found: int
    fixed: int
    introduced: int

    def value(self, series: str) -> int:
        return int(getattr(self, series))


def round_counts(iterations: Sequence[Mapping[str, Any]]) -> list[RoundCounts]:
    """Per closed round: the issues it found, those of the round before that it no longer found (fixed),
    and those it found that the round before did not (introduced)."""
    return [
        RoundCounts(
            round=int(item["iteration"]),
            found=int(item["issues_found"]),
            fixed=len(item.get("resolved_issues") or []),
            introduced=len(item.get("introduced_issues") or []),
        )
        for item in iterations
    ]


def _tick_step(top: int) -> int:
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if top / step <= 5:
            return step
    return max(1, top // 5)


def issue_chart(counts: Sequence[RoundCounts]) -> str:
    """The chart as an <svg> element (an empty-state paragraph when there is no round)."""
    if not counts:
        return '<p class="empty">No review round has closed yet.</p>'
    group_width = len(SERIES) * BAR_WIDTH + (len(SERIES) - 1) * BAR_GAP
    width = max(LEFT + len(counts) * (group_width + GROUP_GAP) + GROUP_GAP, LEFT + LEGEND_STEP * len(SERIES))
    height = TOP + PLOT_HEIGHT + BOTTOM
    highest = max(max(item.value(name) for name, _label in SERIES) for item in counts)
    step = _tick_step(max(highest, 1))
    top = max(step, -(-max(highest, 1) // step) * step)
    base = TOP + PLOT_HEIGHT

    def y_of(value: int) -> float:
        return base - PLOT_HEIGHT * value / top

    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" '
        'aria-labelledby="chart-title"><title id="chart-title">Issues per review round: found, fixed and '
        "introduced</title>"
    ]
    for tick in range(0, top + 1, step):
        y = y_of(tick)
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{width - 8}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}</text>'
        )
    for index, item in enumerate(counts):
        x0 = LEFT + GROUP_GAP + index * (group_width + GROUP_GAP)
        for offset, (name, label) in enumerate(SERIES):
            value = item.value(name)
            x = x0 + offset * (BAR_WIDTH + BAR_GAP)
            y = y_of(value)
            data = f'data-round="{item.round}" data-series="{name}" data-value="{value}"'
            parts.append(
                f'<rect class="bar bar-{name}" {data} x="{x}" y="{y:.1f}" width="{BAR_WIDTH}" '
                f'height="{base - y:.1f}"><title>Round {item.round}: {value} {label.lower()}</title></rect>'
                f'<text class="bar-label" {data} x="{x + BAR_WIDTH / 2:.1f}" y="{y - 4:.1f}" '
                f'text-anchor="middle">{value}</text>'
            )
        parts.append(
            f'<text class="axis" x="{x0 + group_width / 2:.1f}" y="{base + 18}" '
            f'text-anchor="middle">Round {item.round}</text>'
        )
    legend_x = LEFT
    for name, label in SERIES:
        parts.append(
            f'<rect class="bar-{name}" x="{legend_x}" y="{height - 14}" width="10" height="10"/>'
            f'<text class="axis" x="{legend_x + 14}" y="{height - 5}">{escape(label)}</text>'
        )
        legend_x += LEGEND_STEP
    parts.append("</svg>")
    return "".join(parts)


def counts_table(counts: Sequence[RoundCounts]) -> str:
    """The chart's figures as a table (for screen readers, and for copying)."""
    if not counts:
        return ""
    head = "".join(f"<th scope='col'>{label}</th>" for _name, label in SERIES)
    rows = "".join(
        f"<tr><th scope='row'>Round {item.round}</th>"
        + "".join(f"<td>{item.value(name)}</td>" for name, _label in SERIES)
        + "</tr>"
        for item in counts
    )
    return f"<table class='numbers'><thead><tr><th>Round</th>{head}</tr></thead><tbody>{rows}</tbody></table>"
