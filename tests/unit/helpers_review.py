"""Builders for the review loop tests: run states, agent documents, fake effects, a loop driver, scripts."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers_runs import FakeClock

from fixloop.contracts.coordinator import LoopConfig
from fixloop.contracts.fixer import FixerOutput
from fixloop.contracts.reviewer import ReviewerOutput
from fixloop.contracts.verifier import VerifierOutput
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.review.gate import attach_verification
from fixloop.review.machine import decide_next
from fixloop.review.questions import choose
from fixloop.review.record import record_agent_result
from fixloop.review.step import Transition
from fixloop.runs import creation, trust
from fixloop.runs.config import COMMAND_FIELDS

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
    lines: dict[str, int] = field(default_factory=dict)  # a file's lines, for shard planning (0 unless set)

    def line_counts(self, files: Sequence[str]) -> dict[str, int]:
        return {name: self.lines.get(name, 0) for name in files}

    def take_snapshot(self, round_number: int, files: Sequence[str]) -> dict[str, Any]:
        self.snapshots.append((round_number, list(files)))
        return {"kind": "fake", "dir": f"snap-{round_number}"}

    def changed_since(self, snapshot: Mapping[str, Any]) -> list[str]:
        return list(self.changed)

    def rollback(self, snapshot: Mapping[str, Any]) -> dict[str, Any]:
        """A rollback report (store.edits.RollbackReport) that restored every file of `changed`."""
        self.rollbacks.append(str(snapshot["dir"]))
        return {
            "label": None,
            "restored": list(self.changed),
            "deleted": [],
            "kept": [],
            "refused": [],
            "left_as_is": [],
            "warnings": [],
        }


@dataclass
class Loop:
    """Drives the loop like the CLI does, one transition at a time, collecting events."""

    state: dict[str, Any]
    effects: FakeEffects = field(default_factory=FakeEffects)
    now: int = START_MS
    events: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def tick(self) -> int:
        self.now += 1000
        return self.now

    def take(self, transition: Transition) -> dict[str, Any]:
        self.state = transition.state
        self.events.extend(transition.events)
        return transition.document

    def next(self) -> dict[str, Any]:
        return self.take(decide_next(self.state, self.effects, self.tick()))

    def record(
        self, agent: str, document: Mapping[str, Any] | None, error: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return self.take(record_agent_result(self.state, agent, document, error, now_ms=self.tick()))

    def review(
        self, by_agent: Mapping[str, Sequence[Mapping[str, Any]]], agents: Iterable[str] = REVIEWER_AGENTS
    ) -> None:
        for agent in agents:
            self.record(agent, reviewer_doc(agent, by_agent.get(agent, [])))

    def verify(self, passed: bool) -> None:
        self.state = attach_verification(self.state, verification(passed))

    def choose(self, choice: str | None, default: bool = False) -> dict[str, Any]:
        return self.take(choose(self.state, choice, default, self.effects, self.tick()))

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [fields for _level, event_type, fields in self.events if event_type == kind]

    @property
    def review_doc(self) -> dict[str, Any]:
        result: dict[str, Any] = self.state["review"]
        return result


def all_fixed(issue_ids: Iterable[str]) -> dict[str, Any]:
    return fixer_doc({issue_id: "succeeded" for issue_id in issue_ids})


# ---- scripted loops -----------------------------------------------------------------------------------

CR = "code-reviewer"
SFH = "silent-failure-hunter"

A = issue("A", 10, "Missing null check on `user`")
B = issue("B", 30, "Unclosed file handle")
C = issue("C", 50, "Swallowed exception in `load`")
D = issue("D", 70, "Off by one in the loop bound")
NOT_FIXABLE = issue("N", 90, "Consider renaming the module", confidence=60)


@dataclass
class Round:
    """What happens in one review round of a Script."""

    attempts: list[dict[str, list[dict[str, Any]]]]  # per review attempt: agent -> issues
    agents: Sequence[str] = REVIEWER_AGENTS  # the reviewers that record anything
    verifier: list[dict[str, Any] | None] = field(default_factory=list)  # one per verify_findings
    verify: bool = True
    choice: str | None = None


def only(*issues: dict[str, Any]) -> list[dict[str, list[dict[str, Any]]]]:
    return [{CR: list(issues)}]


@dataclass
class Script:
    """A whole loop: its rounds, config and changed files, and the initial verification's outcome."""

    rounds: list[Round]
    config: dict[str, Any] = field(default_factory=lambda: {"use_verifier": False})
    changed_files: Sequence[str] = ("src/app.py",)
    gate: bool = True
    gate_choice: str | None = None


def drive(script: Script) -> tuple[Loop, list[str], dict[str, Any]]:
    """Play `script` as the coordinator would: (the loop, a label per action, the final action)."""
    loop = Loop(make_state(script.changed_files, **script.config))
    labels: list[str] = []
    verifier_queues = {index + 1: list(item.verifier) for index, item in enumerate(script.rounds)}
    for _step in range(80):
        doc = loop.next()
        action = doc["action"]
        number = doc.get("round", 0)
        spec = script.rounds[number - 1] if number >= 1 else None
        if action == "verify":
            labels.append(f"verify:{doc['slot']}" + (f":{number}" if doc["slot"] == "post_fix" else ""))
            loop.verify(script.gate if doc["slot"] == "initial" else spec.verify)  # type: ignore[union-attr]
        elif action == "review":
            assert spec is not None
            labels.append(f"review:{number}" + (f"#{doc['attempt']}" if doc["attempt"] > 1 else ""))
            by_agent = spec.attempts[min(doc["attempt"], len(spec.attempts)) - 1]
            loop.review(by_agent, spec.agents)
        elif action == "verify_findings":
            labels.append(f"verify_findings:{number}")
            answer = verifier_queues[number].pop(0)
            if answer is not None:
                loop.record("review-verifier", answer)
        elif action == "fix":
            labels.append(f"fix:{number}")
            loop.record("review-fixer", all_fixed(item["id"] for item in doc["issues"]))
        elif action == "ask_user":
            labels.append(f"ask_user:{doc['context']}:{number}")
            initial = doc["context"] == "initial_verification_failed"
            loop.choose(script.gate_choice if initial or spec is None else spec.choice)
        elif action == "stop":
            labels.append(f"stop:{doc['termination_reason']}")
            return loop, labels, doc
        else:
            labels.append(f"failed:{doc['error']['code']}")
            return loop, labels, doc
    raise AssertionError(f"the loop did not end: {labels}")


def open_review(**config: Any) -> Loop:
    """A loop past the initial verification, waiting for the reviewers of round 1."""
    loop = Loop(make_state(**config))
    loop.next()
    loop.verify(True)
    assert loop.next()["action"] == "review"
    return loop


# ---- a loop to report on ------------------------------------------------------------------------------

USER_NULL_CHECK = issue(
    "A",
    10,
    "Missing null check on `user`",
    existing_code="user.name",
    improved_code="user and user.name",
)
SQL_CONCATENATION = issue(
    "B",
    30,
    "SQL built by string concatenation",
    category="security",
    severity="critical",
    end_line=32,
)
OUTDATED_COMMENT = issue("L", 50, "Comment is outdated", category="comments", severity="low", confidence=60)


def two_rounds() -> Loop:
    """Round 1: the null check (two agents), the SQL and the comment; fix the first two.
    Round 2: the SQL issue persists (moved), the comment remains, a broad except is new."""
    loop = Loop(make_state(use_verifier=False))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [USER_NULL_CHECK, SQL_CONCATENATION], SFH: [USER_NULL_CHECK, OUTDATED_COMMENT]})
    fix = loop.next()
    loop.record("review-fixer", all_fixed(item["id"] for item in fix["issues"]))
    loop.next()
    loop.verify(True)
    loop.next()
    moved_b = {**SQL_CONCATENATION, "line": 33, "end_line": 35}
    c = issue("C", 80, "Broad except hides errors", category="error-handling", auto_fixable=False)
    loop.record(CR, reviewer_doc(CR, [moved_b], positive=["Clear names"]))
    loop.record(SFH, reviewer_doc(SFH, [OUTDATED_COMMENT, c]))
    for agent in REVIEWER_AGENTS[2:]:
        loop.record(agent, reviewer_doc(agent))
    loop.next()  # round 2: 1 fixable (SQL_CONCATENATION) < 2 -> fix again
    return loop


# ---- a run on disk to verify ---------------------------------------------------------------------------


def configure(root: Path, *, approve: bool = True, **config: Any) -> None:
    """Write the project's fixloop config (.claude/fixloop.json); the user approves its commands unless
    `approve` is False."""
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "fixloop.json").write_text(json.dumps(config))
    commands = {
        step: config[field]
        for step, field in COMMAND_FIELDS.items()
        if isinstance(config.get(field), str) and config[field].strip()
    }
    if approve and commands:
        trust.approve(root, commands)


def new_run(root: Path, clock: FakeClock, files: list[str] | None = None) -> dict[str, Any]:
    """Start a review run of `root` (changed files: src/app.py unless given); its state."""
    state: dict[str, Any] = creation.start_run(
        "review", root=root, changed_files=["src/app.py"] if files is None else files, clock=clock
    )["state"]
    return state
