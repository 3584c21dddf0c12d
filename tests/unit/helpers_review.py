"""Builders for the review state machine tests: run states, agent documents, fake effects, a loop driver."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fixloop.contracts.coordinator import LoopConfig
from fixloop.contracts.fixer import FixerOutput
from fixloop.contracts.reviewer import ReviewerOutput
from fixloop.contracts.verifier import VerifierOutput
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.review import machine as review_state

RUN_ID = "abcd1234"
START_MS = 1_000_000


def make_state(changed_files: Sequence[str] = ("src/app.py",), **config: Any) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "run_id": RUN_ID,
        "workflow": "review",
        "status": "running",
        "project_dir": "/work/project",
        "changed_files": list(changed_files),
        "base_ref": None,
        "config": LoopConfig.model_validate(config).model_dump(mode="json"),
        "errors": [],
        "error_count": 0,
        "review": {},
        "verification": None,
    }


def issue(
    issue_id: str,
    line: int,
    description: str,
    *,
    file: str = "src/app.py",
    category: str = "bug",
    confidence: int = 90,
    severity: str = "high",
    auto_fixable: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "id": issue_id,
        "severity": severity,
        "confidence": confidence,
        "file": file,
        "line": line,
        "category": category,
        "description": description,
        "suggestion": f"Fix: {description}",
        "auto_fixable": auto_fixable,
        **extra,
    }


def reviewer_doc(
    agent: str, issues: Iterable[Mapping[str, Any]] = (), positive: Sequence[str] = ()
) -> dict[str, Any]:
    document = {
        "status": "success",
        "agent": agent,
        "issues": list(issues),
        "positive_observations": list(positive),
    }
    return ReviewerOutput.model_validate(document).model_dump(mode="json")


def failed_reviewer_doc(agent: str, code: str = "TIMEOUT") -> dict[str, Any]:
    document = {
        "status": "failed",
        "agent": agent,
        "error": {"code": code, "message": f"{agent} timed out", "phase": "execution", "recoverable": True},
    }
    return ReviewerOutput.model_validate(document).model_dump(mode="json")


def fixer_doc(results: Mapping[str, str], files: Sequence[str] = ("src/app.py",)) -> dict[str, Any]:
    document = {
        "status": "success" if all(value == "succeeded" for value in results.values()) else "partial",
        "agent": "review-fixer",
        "results": [
            {
                "issue_id": issue_id,
                "status": status,
                "reason": None if status == "succeeded" else "could not",
                "files": list(files),
            }
            for issue_id, status in results.items()
        ],
        "files_modified": list(files),
    }
    return FixerOutput.model_validate(document).model_dump(mode="json")


def verifier_doc(
    score: int,
    delete: Mapping[str, str] | None = None,
    missing: Sequence[str] = (),
    weaknesses: Sequence[str] = (),
) -> dict[str, Any]:
    level = "GOOD" if score >= 70 else "ACCEPTABLE" if score >= 50 else "POOR"
    document = {
        "status": "success",
        "agent": "review-verifier",
        "verification_result": {
            "accuracy_check": [
                {
                    "issue_id": issue_id,
                    "accuracy_status": "INCORRECT",
                    "evidence": reason,
                    "deletion_required": True,
                    "deletion_reason": reason,
                }
                for issue_id, reason in (delete or {}).items()
            ],
            "rule_compliance_check": [],
            "quality_assessment": {
                "overall_score": score,
                "quality_level": level,
                "strengths": [],
                "weaknesses": list(weaknesses),
                "missing_issues": [
                    {"description": text, "evidence": "see code", "suggested_severity": "high"}
                    for text in missing
                ],
            },
        },
    }
    return VerifierOutput.model_validate(document).model_dump(mode="json")


def verification(passed: bool, failing: str = "tests") -> dict[str, Any]:
    steps = {
        name: {"status": "passed", "duration_ms": 10, "exit_code": 0}
        for name in ("tests", "lint", "typecheck")
    }
    if not passed:
        steps[failing] = {"status": "failed", "duration_ms": 10, "exit_code": 1, "reason": "exit code 1"}
    return {**steps, "status": "passed" if passed else "failed", "passed": passed}


@dataclass
class FakeEffects:
    """Snapshots are names; `changed` is what changed_since reports; rollbacks are remembered."""

    changed: list[str] = field(default_factory=lambda: ["src/app.py"])
    snapshots: list[tuple[int, list[str]]] = field(default_factory=list)
    rollbacks: list[str] = field(default_factory=list)

    def take_snapshot(self, round_number: int, files: Sequence[str]) -> dict[str, Any]:
        self.snapshots.append((round_number, list(files)))
        return {"kind": "fake", "dir": f"snap-{round_number}"}

    def changed_since(self, snapshot: Mapping[str, Any]) -> list[str]:
        return list(self.changed)

    def rollback(self, snapshot: Mapping[str, Any]) -> list[str]:
        self.rollbacks.append(str(snapshot["dir"]))
        return list(self.changed)


@dataclass
class Loop:
    """Drives review_state like the CLI does, one transition at a time, collecting events."""

    state: dict[str, Any]
    effects: FakeEffects = field(default_factory=FakeEffects)
    now: int = START_MS
    events: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def tick(self) -> int:
        self.now += 1000
        return self.now

    def take(self, transition: review_state.Transition) -> dict[str, Any]:
        self.state = transition.state
        self.events.extend(transition.events)
        return transition.document

    def next(self) -> dict[str, Any]:
        return self.take(review_state.decide_next(self.state, self.effects, self.tick()))

    def record(
        self, agent: str, document: Mapping[str, Any] | None, error: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return self.take(
            review_state.record_agent_result(self.state, agent, document, error, now_ms=self.tick())
        )

    def review(
        self, by_agent: Mapping[str, Sequence[Mapping[str, Any]]], agents: Iterable[str] = REVIEWER_AGENTS
    ) -> None:
        for agent in agents:
            self.record(agent, reviewer_doc(agent, by_agent.get(agent, [])))

    def verify(self, passed: bool) -> None:
        self.state = review_state.attach_verification(self.state, verification(passed))

    def choose(self, choice: str | None, default: bool = False) -> dict[str, Any]:
        return self.take(review_state.choose(self.state, choice, default, self.effects, self.tick()))

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [fields for _level, event_type, fields in self.events if event_type == kind]

    @property
    def review_doc(self) -> dict[str, Any]:
        result: dict[str, Any] = self.state["review"]
        return result


def all_fixed(issue_ids: Iterable[str]) -> dict[str, Any]:
    return fixer_doc({issue_id: "succeeded" for issue_id in issue_ids})
