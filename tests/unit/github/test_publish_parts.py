"""The pure parts of `review publish`: the diff's commentable lines, comment bodies (no mention, no
secret, a fence longer than the code's), exact-lines suggestions, GitHub's answers read by `gh api -i`."""

from __future__ import annotations

from fixloop.github.diffmap import DiffMap, commentable_lines
from fixloop.github.publish_body import (
    ZERO_WIDTH_SPACE,
    description_of,
    finding_body,
    finding_of,
    replaceable,
    safe_text,
    suggestion_block,
)
from fixloop.github.rest import Answer, parse_included, retry_after_seconds

PATCH = "@@ -1,3 +1,4 @@\n a\n-b\n+B\n+C\n d\n@@ -10,2 +11,2 @@\n x\n-y\n+Y\n\\ No newline at end of file\n"


def test_commentable_lines_are_added_and_context_lines_of_the_new_side() -> None:
    assert commentable_lines(PATCH) == frozenset({1, 2, 3, 4, 11, 12})
    assert commentable_lines("") == frozenset()


def test_a_diff_map_covers_a_span_only_when_every_line_is_shown() -> None:
    diff = DiffMap([{"filename": "a.py", "status": "modified", "patch": PATCH}, {"filename": "b.png"}])
    assert diff.covers("a.py", 2, 4) and not diff.covers("a.py", 4, 11) and not diff.covers("b.png", 1, 1)
    assert not diff.covers("missing.py", 1, 1)


def test_safe_text_neutralises_mentions_and_masks_secrets() -> None:
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    text = safe_text(f"cc @alice, @org/team; mail bob@example.com; `@code`; {token}")
    assert f"@{ZERO_WIDTH_SPACE}alice" in text and f"@{ZERO_WIDTH_SPACE}org/team" in text
    assert "bob@example.com" in text and "`@code`" in text
    assert token not in text


def test_a_suggestion_fence_is_longer_than_any_fence_in_the_code() -> None:
    assert suggestion_block("x = 1\n") == "```suggestion\nx = 1\n```"
    assert suggestion_block('doc = """\n```py\n```\n"""').startswith("````suggestion\n")


def test_a_finding_body_round_trips_its_marker_and_description() -> None:
    issue = {
        "id": "FL-001",
        "fingerprint": "ab12cd34ef",
        "severity": "high",
        "category": "Bug Risk",
        "description": "`x`  is\nnever checked",
        "suggestion": "Check it.",
    }
    body = finding_body(issue, None)
    assert finding_of(body) == ("ab12cd34ef", "bug-risk")
    assert description_of(body) == "`x` is never checked"
    assert "```suggestion" not in body


def test_replaceable_needs_the_exact_lines() -> None:
    lines = ["a", "  b", "  c", "d"]
    assert replaceable("  b\n  c\n", lines, 2, 3)
    assert not replaceable("  b", lines, 2, 3) and not replaceable(None, lines, 2, 2)
    assert not replaceable("d", lines, 4, 5)


def test_parse_included_reads_status_headers_and_json() -> None:
    answer = parse_included(
        'HTTP/1.1 403 Forbidden\r\nRetry-After: 30\r\nX-A: b\r\n\r\n{"message": "slow down"}'
    )
    assert answer == Answer(403, {"retry-after": "30", "x-a": "b"}, {"message": "slow down"})
    assert parse_included("gh: not a response") is None
    assert retry_after_seconds(answer, 0.0) == 30


def test_rate_limits_are_told_from_other_refusals() -> None:
    reset = Answer(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1100"}, {"message": "x"})
    assert retry_after_seconds(reset, 1000.0) == 100
    assert retry_after_seconds(Answer(429, {}, None), 0.0) == 60
    assert (
        retry_after_seconds(Answer(403, {}, {"message": "Resource not accessible by integration"}), 0) is None
    )
    assert retry_after_seconds(Answer(422, {"retry-after": "1"}, None), 0.0) is None
