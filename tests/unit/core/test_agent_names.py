"""One normaliser for every spelling of an agent's name."""

from __future__ import annotations

import pytest

from fixloop.core.agent_names import CONTRACTED_AGENTS, REVIEWER_AGENTS, agent_name


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("code-reviewer", "code-reviewer"),
        ("fixloop:code-reviewer", "code-reviewer"),
        ("FIXLOOP:Code-Reviewer", "code-reviewer"),
        ("review-code-reviewer", "code-reviewer"),
        ("fixloop:review-silent-failure-hunter", "silent-failure-hunter"),
        ("  Type-Design-Analyzer ", "type-design-analyzer"),
        ("review-fixer", "review-fixer"),
        ("fixloop: review-verifier", "review-verifier"),
        ("fixloop:bugfix-coordinator", "bugfix-coordinator"),
        ("review-unknown", "review-unknown"),
    ],
)
def test_every_spelling_gives_fixloops_name(given: str, expected: str) -> None:
    assert agent_name(given) == expected


@pytest.mark.parametrize(
    "given", [None, 3, "", "   ", "fixloop:", "other:code-reviewer", "a:b:c", "fixloop:a:b"]
)
def test_no_name(given: object) -> None:
    assert agent_name(given) is None


def test_plugin_only_takes_only_this_plugins_agent_types() -> None:
    assert agent_name("fixloop:code-reviewer", plugin_only=True) == "code-reviewer"
    assert agent_name("Fixloop:Review-Fixer", plugin_only=True) == "review-fixer"
    assert agent_name("code-reviewer", plugin_only=True) is None
    assert agent_name("general-purpose", plugin_only=True) is None
    assert agent_name("other:code-reviewer", plugin_only=True) is None


def test_contracted_agents_are_the_reviewers_the_fixer_and_the_verifier() -> None:
    assert (*REVIEWER_AGENTS, "review-fixer", "review-verifier") == CONTRACTED_AGENTS
    assert all(agent_name(name) == name for name in CONTRACTED_AGENTS)
