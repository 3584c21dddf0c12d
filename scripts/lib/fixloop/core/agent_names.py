"""The names of fixloop's agents, and the one function that turns any spelling of a name into fixloop's.

Standard library only: hooks import this module on every fixloop subagent call.
"""

from __future__ import annotations

PLUGIN_PREFIX = "fixloop:"
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
# The one agent that carries out the engine's actions; every other fixloop agent answers to a contract.
COORDINATOR_AGENT = "coordinator"
# Reviewers are also known as `review-<name>` (e.g. review-code-reviewer in older logs).
_DESIGN_PREFIX = "review-"


def agent_name(value: object, *, plugin_only: bool = False) -> str | None:
    """fixloop's name of an agent: `fixloop:code-reviewer`, `review-code-reviewer` and ` Code-Reviewer `
    all give `code-reviewer`. None for a non-string, an empty name, or another plugin's agent (`x:name`).

    With `plugin_only`, only a Claude Code agent type of this plugin (`fixloop:<name>`) has a name: that is
    how hooks tell fixloop's subagents from everyone else's.
    """
    if not isinstance(value, str):
        return None
    name = value.strip().lower()
    if name[: len(PLUGIN_PREFIX)] == PLUGIN_PREFIX:
        name = name[len(PLUGIN_PREFIX) :].strip()
    elif plugin_only:
        return None
    if not name or ":" in name:
        return None
    if name[: len(_DESIGN_PREFIX)] == _DESIGN_PREFIX and name[len(_DESIGN_PREFIX) :] in REVIEWER_AGENTS:
        name = name[len(_DESIGN_PREFIX) :]
    return name
