"""The chart of issues per round: figures from the review's iterations, carried by the SVG itself."""

from __future__ import annotations

import re

from helpers_review import two_rounds

from fixloop.report.coordinator import coordinator_output
from fixloop.report.issue_chart import RoundCounts, counts_table, issue_chart, round_counts


def test_counts_per_round() -> None:
    iterations = coordinator_output(two_rounds().state)["review_iterations"]
    assert round_counts(iterations) == [RoundCounts(1, 3, 0, 0), RoundCounts(2, 3, 1, 1)]


def test_every_bar_carries_its_figures() -> None:
    counts = [RoundCounts(1, 7, 0, 0), RoundCounts(2, 4, 5, 2)]
    svg = issue_chart(counts)
    bars = re.findall(
        r'<rect class="bar bar-(\w+)" data-round="(\d+)" data-series="(\w+)" data-value="(\d+)"', svg
    )
    assert bars == [
        ("found", "1", "found", "7"), ("fixed", "1", "fixed", "0"), ("introduced", "1", "introduced", "0"),
        ("found", "2", "found", "4"), ("fixed", "2", "fixed", "5"), ("introduced", "2", "introduced", "2"),
    ]  # fmt: skip
    labels = re.findall(
        r'<text class="bar-label" data-round="(\d+)" data-series="(\w+)"[^>]*>(\d+)</text>', svg
    )
    assert labels == [(r, s, v) for _c, r, s, v in bars]
    bar_size = r'data-round="(\d+)" data-series="(\w+)" data-value="\d+" x="[\d.]+" y="[\d.]+" width="\d+"'
    heights = {(r, s): float(h) for r, s, h in re.findall(bar_size + r' height="([\d.]+)"', svg)}
    assert heights[("1", "found")] > heights[("2", "fixed")] > heights[("2", "found")]
    assert heights[("2", "found")] > heights[("2", "introduced")] > heights[("1", "fixed")] == 0.0
    assert svg.startswith('<svg class="chart" xmlns="http://www.w3.org/2000/svg"')


def test_no_round_no_chart() -> None:
    assert issue_chart([]) == '<p class="empty">No review round has closed yet.</p>'
    assert counts_table([]) == ""


def test_the_table_repeats_the_figures() -> None:
    table = counts_table([RoundCounts(3, 2, 1, 0)])
    assert "<tr><th scope='row'>Round 3</th><td>2</td><td>1</td><td>0</td></tr>" in table
