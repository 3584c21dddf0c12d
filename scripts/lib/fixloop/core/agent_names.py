"""The names of fixloop's contracted agents (standard library only, so hooks can import them)."""

from __future__ import annotations

REVIEWER_AGENTS: tuple[str, ...] = (
    "code-reviewer",
    "silent-failure-hunter",
    "code-simplifier",
    "test-analyzer",
    "comment-analyzer",
    "type-design-analyzer",
)
FIXER_AGENT = "review-fixer"
VERIFIER_AGENT = "review-verifier"
CONTRACTED_AGENTS: tuple[str, ...] = (*REVIEWER_AGENTS, FIXER_AGENT, VERIFIER_AGENT)
