"""Property: for any findings from any reviewers and any baseline, no baselined fingerprint is ever fixable
nor remaining."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from helpers_identity import baseline_entry
from helpers_review import Loop, issue, make_state
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.report.coordinator import coordinator_output
from fixloop.review.identity import fingerprint
from fixloop.runs.baseline import BASELINE_FILE, baseline_text

FILES = ("src/app.py", "src/db.py")
CATEGORIES = ("bug", "security", "style")
DESCRIPTIONS = ("Missing null check on `user`", "Unclosed file handle", "SQL built by concatenation")

findings = st.builds(
    lambda file, line, category, description, severity, confidence, fixable: issue(
        "X",
        line,
        description,
        file=file,
        category=category,
        severity=severity,
        confidence=confidence,
        auto_fixable=fixable,
    ),
    st.sampled_from(FILES),
    st.integers(1, 60),
    st.sampled_from(CATEGORIES),
    st.sampled_from(DESCRIPTIONS),
    st.sampled_from(("critical", "high", "medium", "low")),
    st.integers(80, 100),
    st.booleans(),
)
# Each reviewer reports some findings; the baseline takes some of them, and some others of its own.
reports = st.lists(
    st.lists(findings, max_size=5), min_size=len(REVIEWER_AGENTS), max_size=len(REVIEWER_AGENTS)
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reports=reports, picks=st.lists(st.booleans(), max_size=30), extra=st.lists(findings, max_size=4))
def test_no_baselined_fingerprint_is_fixable_or_remaining(
    reports: list[list[dict[str, Any]]], picks: list[bool], extra: list[dict[str, Any]]
) -> None:
    reported = [item for items in reports for item in items]
    accepted = [item for item, pick in zip(reported, picks, strict=False) if pick] + extra
    baselined = {fingerprint(item) for item in accepted}
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / BASELINE_FILE).parent.mkdir()
        (root / BASELINE_FILE).write_text(
            baseline_text([baseline_entry(item, fingerprint(item)) for item in accepted])
        )
        state = make_state(FILES, use_verifier=False)
        state["project_dir"] = str(root)
        loop = Loop(state)
        loop.next()
        loop.verify(True)
        assert loop.next()["action"] == "review"
        loop.review(
            {
                agent: [{**item, "id": f"R-{index}"} for index, item in enumerate(items)]
                for agent, items in zip(REVIEWER_AGENTS, reports, strict=True)
            }
        )
        action = loop.next()
        rnd = loop.review_doc["rounds"][0]
        by_id = {item["id"]: item for item in rnd["issues"]}
        assert not {item["fingerprint"] for item in rnd["issues"]} & baselined
        assert not {by_id[issue_id]["fingerprint"] for issue_id in rnd["fixable"]} & baselined
        if action["action"] == "fix":
            assert not {by_id[item["id"]]["fingerprint"] for item in action["issues"]} & baselined
        remaining = coordinator_output(loop.state).get("remaining_issues") or []
        assert not {by_id[item["id"]]["fingerprint"] for item in remaining} & baselined
        assert sum(rnd["suppressed"].values()) == len(rnd["suppressed_findings"])
