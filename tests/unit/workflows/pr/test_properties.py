"""Properties of whole fix-pr-review runs on the engine, with the real gh against the local GitHub server:
random review threads (open, resolved, outdated, a bot's, the author's own, already answered, asked again),
the classifier's labels and confidences, agents that answer validly, invalidly, with a failure document or
not at all, verification outcomes, a commit hook that refuses, gh failing at any call, posting included
(refused, timed out, logged out, or its answer lost after GitHub applied the change), dry runs and `--phase`
selections, then a `--phase=6` re-run.

Every run: phases start in order and each one started ends, no phase is open at the end, the run's status
never beats its phases (a failed phase or a stop decision never ends in success), it ends within a bounded
number of `next` calls; a dry run posts, commits and changes nothing; no thread gets a second reply across a
run and its re-run, no thread the run left alone gets one, and no reply about a fix a dry run never made is
posted."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from fake_github import FakeGitHub, RecordedRequest, ReviewThread, make_git_repo
from helpers_github import APP, PR_BRANCH, git, open_pr
from helpers_review import issue, reviewer_doc
from helpers_runs import read_events
from hypothesis import Phase, event, given, settings
from hypothesis import strategies as st
from workflows import test_engine_properties as engine_properties
from workflows.drive_helpers import fixer_answer
from workflows.flow_helpers import issues_in_task
from workflows.pr.test_flow import FIXED_APP
from workflows.test_engine_properties import SETTINGS, World, check_run

from fixloop.contracts.pr import CLASSIFIER_AGENT, REPLY_WRITER_AGENT
from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS
from fixloop.core.errors import FixloopError
from fixloop.github.gh import Gh, GhResult
from fixloop.github.markers import reply_marker
from fixloop.runs import creation, lifecycle
from fixloop.workflows import driver

THREAD_KINDS = ("open",) * 4 + ("resolved", "outdated", "bot", "own", "answered", "asked again")
EARLIER_REPLY = "Done.\n\n<!-- fixloop: run 20250101-000000-earlier thread PRRT_old -->"
# How a gh call fails: GitHub refuses it, applies it but its answer is lost, gh times out (before or after
# GitHub applied it), or the login is refused. Failing calls are drawn by their number in the example (both
# runs together): among all gh calls, and among the calls that change GitHub (replies, resolutions, the
# summary comment), where a lost answer matters most.
GH_FAILURES = ("lost", "refused", "timeout", "unauthorized", "lost in a timeout")
LAST_FAILING_CALL = 24
LAST_FAILING_CHANGE = 6
# hypothesis draws the first and the last choice of a list more often than the others: the likely ones go
# there (the first is also what a failing example shrinks to).
# How agents answer (World.answer): mostly valid, so that runs get as far as posting and its re-run.
ANSWER_KINDS = ("valid",) * 7 + ("invalid", "failed", "silent") + ("valid",) * 7
FIX_RESULTS = ("succeeded", "failed", "succeeded", "skipped", "succeeded")
FIX_LIKELY_LABELS = ("fix", "answer", "fix", "disagree", "unclear", "fix")
LIKELY = (True, True, False, True)
RARELY = (False,) * 3 + (True,) + (False,) * 3
PHASES = ("all",) * 5 + ("0,1,2", "0,1,2,3,4,5", "0,1,2,3,5,6,7", "5,6", "7", "all")
MARKER_START = "<!-- fixloop: run "
# Each example runs gh a dozen times or more (about 0.1 s a call): few examples, so the file stays quick;
# no explain phase, which would replay a failing example a hundred times more.
PR_SETTINGS = settings(SETTINGS, max_examples=25, phases=[p for p in Phase if p is not Phase.explain])


def seed(github: FakeGitHub, kinds: list[str]) -> list[ReviewThread]:
    """Pull request #7 (author alice) with one review thread of each kind drawn, in order."""
    pr = open_pr(github)
    replies = {
        "answered": [("fixloop-bot", EARLIER_REPLY)],
        "asked again": [("fixloop-bot", EARLIER_REPLY), ("bob", "Still not what I meant.")],
    }
    return [
        pr.add_thread(
            path="src/app.py",
            line=None if kind == "outdated" else 1 + index % 2,
            original_line=1,
            body=f"Request {index}: please change this.",
            author={"bot": "coderabbitai[bot]", "own": "alice"}.get(kind, "bob"),
            replies=replies.get(kind, []),
            is_resolved=kind == "resolved",
            is_outdated=kind == "outdated",
        )
        for index, kind in enumerate(kinds)
    ]


@contextmanager
def pull_request_checkout() -> Iterator[tuple[FakeGitHub, Path]]:
    """A fresh local GitHub server, gh's environment pointing at it, and a checkout of pull request #7's
    branch (src/app.py committed), as the `github`, `gh_env` and `pr_checkout` fixtures make them."""
    with tempfile.TemporaryDirectory() as folder, FakeGitHub(Path(folder) / "github") as github:
        with pytest.MonkeyPatch.context() as patch:
            for name in [name for name in os.environ if name not in github.env]:
                patch.delenv(name)
            for name, value in github.env.items():
                patch.setenv(name, value)
            checkout = make_git_repo(Path(folder) / "checkout", github)
            git(checkout, "config", "user.name", "Octo Cat")
            git(checkout, "config", "user.email", "octocat@fixloop.test")
            (checkout / ".git" / "info" / "exclude").write_text(".claude/\n")
            git(checkout, "checkout", "-q", "-b", PR_BRANCH)
            (checkout / "src").mkdir()
            (checkout / "src" / "app.py").write_text(APP)
            git(checkout, "add", "src/app.py")
            git(checkout, "commit", "-q", "-m", "Add the parser")
            yield github, checkout.resolve()
        assert github.errors == [], "the fake GitHub server failed on a request:\n" + "\n".join(github.errors)


def is_mutation(request: RecordedRequest) -> bool:
    """A request that changes GitHub: a GraphQL mutation, or any REST call but a read."""
    if request.path == "/api/graphql":
        return str((request.body or {}).get("query") or "").lstrip().startswith("mutation")
    return request.method not in ("GET", "HEAD")


def changes_github(args: tuple[str, ...], input_text: str | None) -> bool:
    """Whether `gh ARGS` (with `input_text` on its standard input) changes GitHub."""
    if args[:2] == ("api", "graphql"):
        return str(json.loads(input_text or "{}").get("query") or "").lstrip().startswith("mutation")
    return args[:2] == ("pr", "comment")


def new_replies(thread: ReviewThread) -> list[str]:
    """The fixloop replies in `thread` that the runs of this example posted."""
    return [c.body for c in thread.comments if MARKER_START in c.body and c.body != EARLIER_REPLY]


class PrWorld(World):
    """World (test_engine_properties) with gh, the review threads' agents and the commit drawn too."""

    def __init__(
        self, data: st.DataObject, root: Path, gh_failures: dict[int, str], change_failures: dict[int, str]
    ) -> None:
        super().__init__(data, root, "mixed")
        self.gh_failures = gh_failures
        self.change_failures = change_failures
        self.gh_calls = 0
        self.gh_changes = 0

    def state(self) -> dict[str, Any]:
        return lifecycle.load_run(self.root, self.run_id)

    def batch(self, phase: int) -> list[str]:
        """The thread ids the batched phase `phase` handed out last."""
        data = self.state()["flow"]["phases"][str(phase)]["data"]
        return [str(thread_id) for thread_id in data["batches"][data["sent"]]]

    # ---- gh ----------------------------------------------------------------------------------------

    def gh(self, real: Any) -> Any:
        def run(gh: Gh, args: tuple[str, ...], input_text: str | None, stdout: Any) -> GhResult:
            outcome = self.gh_failures.get(self.gh_calls, "ok")
            self.gh_calls += 1
            if changes_github(args, input_text):
                outcome = self.change_failures.get(self.gh_changes, outcome)
                self.gh_changes += 1
            if outcome != "ok":
                event(f"gh {outcome}: {' '.join(args[:2])}")
            if outcome.startswith("lost"):
                real(gh, args, input_text, stdout)  # GitHub did it; the answer never came back
            if outcome.endswith("timeout"):
                raise FixloopError("GH_TIMEOUT", f"`gh {' '.join(args[:2])}` did not finish within 120s.")
            if outcome == "unauthorized":
                return GhResult(tuple(args), 1, "", "HTTP 401: Bad credentials (https://api.github.com)")
            if outcome in ("lost", "refused"):
                return GhResult(tuple(args), 1, "", "HTTP 502: Server Error (https://api.github.com)")
            result: GhResult = real(gh, args, input_text, stdout)
            return result

        return run

    def verification(self, root: Path, state: dict[str, Any], params: dict[str, Any], clock: Any) -> Any:
        """Phase 4's checks (before and after the fix) and the review's: they pass more often than not."""
        passed = self.data.draw(st.sampled_from(LIKELY), label="verification passes")
        step = {"status": "passed" if passed else "failed", "duration_ms": 1, "exit_code": 0 if passed else 1}
        return {"tests": step, "lint": step, "typecheck": step, "status": step["status"], "passed": passed}

    # ---- agents -------------------------------------------------------------------------------------

    def document(self, agent: str) -> dict[str, Any]:
        if agent == CLASSIFIER_AGENT:
            return self.classifier()
        if agent == REPLY_WRITER_AGENT:
            return self.writer()
        if agent == FIXER_AGENT:
            return self.thread_fixer() if "4" in self.state()["open_phases"] else self.review_fixer()
        if agent in REVIEWER_AGENTS:
            count = self.data.draw(st.integers(0, 2), label="issues")
            return reviewer_doc(agent, [issue(f"X-{n}", 1, f"problem {n}") for n in range(count)])
        return super().document(agent)

    def classifier(self) -> dict[str, Any]:
        draw = self.data.draw
        batch = self.batch(3)
        if draw(st.sampled_from(RARELY), label="labels other threads"):
            batch = [*batch[1:], "PRRT_other"]
        labels = []
        for thread_id in batch:
            label = draw(st.sampled_from(FIX_LIKELY_LABELS), label="label")
            labels.append(
                {"thread_id": thread_id, "label": label, "reason": "Asked.",
                 "confidence": draw(st.integers(0, 100) | st.integers(80, 100), label="confidence"),
                 "suggestion": "Strip each field." if label == "fix" else None}
            )  # fmt: skip
        return {"status": "success", "agent": CLASSIFIER_AGENT, "classifications": labels}

    def writer(self) -> dict[str, Any]:
        """One reply per thread given, naming the commit of a fixed one (but now and then it forgets)."""
        fixes = (self.state().get("pr_review") or {}).get("fixes") or {}
        forgets = self.data.draw(st.sampled_from(RARELY), label="reply names no commit")
        replies = []
        for thread_id in self.batch(5):
            fix = fixes.get(thread_id) or {}
            named = fix.get("status") == "committed" and not forgets
            body = f"Fixed in {str(fix['commit'])[:7]}." if named else f"About {thread_id}: noted."
            replies.append({"thread_id": thread_id, "body": body})
        return {"status": "success", "agent": REPLY_WRITER_AGENT, "replies": replies}

    def thread_fixer(self) -> dict[str, Any]:
        """Phase 4: the fix threads each fixed, failed or skipped; the file changed, or not."""
        draw = self.data.draw
        changes = draw(st.sampled_from(LIKELY), label="fixer changes the file")
        if changes:
            (self.root / "src" / "app.py").write_text(FIXED_APP)
        results = []
        for thread_id in self.state()["flow"]["phases"]["4"]["data"]["threads"]:
            status = draw(st.sampled_from(FIX_RESULTS), label="fix result")
            fixed = status == "succeeded"
            results.append(
                {"issue_id": thread_id, "status": status, "reason": None if fixed else "Unsure.",
                 "files": ["src/app.py"] if fixed else []}
            )  # fmt: skip
        fixed = any(item["status"] == "succeeded" for item in results)
        return {"status": "success" if fixed else "failed", "agent": FIXER_AGENT, "results": results,
                "files_modified": ["src/app.py"] if changes else []}  # fmt: skip

    def review_fixer(self) -> dict[str, Any]:
        """Phase 7: every issue the review hands over fixed, in src/app.py."""
        handed = issues_in_task(driver.task(self.root, self.run_id, FIXER_AGENT))
        app = self.root / "src" / "app.py"
        app.write_text(app.read_text() + f"# reviewed {self.answers}\n")
        return fixer_answer(handed)

    def drive(self, run_id: str) -> tuple[int, dict[str, Any]]:
        self.run_id = run_id
        with (
            mock.patch.object(Gh, "_run", self.gh(Gh._run)),
            mock.patch.object(engine_properties, "ANSWER_KINDS", ANSWER_KINDS),
        ):
            return super().drive(run_id)


def begin(world: PrWorld, phase: str, dry_run: bool, config: dict[str, Any]) -> str:
    """Start a fix-pr-review run of pull request #7 (as helpers_github.start, on the world's clock)."""
    config_file = world.root / ".claude" / "test-config.json"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(json.dumps({"use_verifier": False, "test_command": "pytest", **config}))
    started = creation.start_run(
        "pr-review", root=world.root, phase=phase, dry_run=dry_run, config_file=config_file,
        claude_session_id="", inputs={"pr": "7"}, trust_config=True, clock=world.clock,
    )  # fmt: skip
    return str(started["state"]["run_id"])


def check_phases(root: Path, run_id: str) -> None:
    """Phases start in order, only selected ones; each one started ends; a run that did not fail ended
    every selected phase."""
    state = lifecycle.load_run(root, run_id)
    events = read_events(state["logging"]["log_files"]["jsonl"])
    started = [int(str(e["phase"])[6:]) for e in events if e["type"] == "PHASE_START"]
    ended = [int(str(e["phase"])[6:]) for e in events if e["type"] == "PHASE_END"]
    assert started == sorted(set(started)) and set(started) <= set(state["phases"]), started
    assert sorted(ended) == started, (started, ended)
    if state["status"] not in ("failed", "user_cancelled"):
        assert started == state["phases"], (started, state["phases"])


def drive_checked(world: PrWorld, github: FakeGitHub, run_id: str) -> dict[str, Any]:
    """Drive the run to its end and check it; a dry run must not have changed GitHub, git or the files."""
    head = git(world.root, "rev-parse", "HEAD")
    app = (world.root / "src" / "app.py").read_text()
    seen = len(github.requests)
    calls, stop = world.drive(run_id)
    check_run(world.root, run_id, calls, stop)
    check_phases(world.root, run_id)
    state = lifecycle.load_run(world.root, run_id)
    if state["dry_run"]:
        assert not [r.operation or r.path for r in github.requests[seen:] if is_mutation(r)]
        assert git(world.root, "rev-parse", "HEAD") == head
        assert (world.root / "src" / "app.py").read_text() == app
    reason = (state["flow"].get("outcome") or {}).get("reason")
    event(f"{'phase 6 again' if state['phases'] == [6] else 'run'}: {state['status']} {reason}")
    return state


@PR_SETTINGS
@given(
    data=st.data(),
    kinds=st.lists(st.sampled_from(THREAD_KINDS), min_size=2, max_size=5),
    gh_failures=st.dictionaries(st.integers(0, LAST_FAILING_CALL), st.sampled_from(GH_FAILURES), max_size=1),
    change_failures=st.dictionaries(
        st.integers(0, LAST_FAILING_CHANGE), st.sampled_from(GH_FAILURES), max_size=2
    ),
    phase=st.sampled_from(PHASES),
    dry_run=st.sampled_from([False, True, False, False]),
    again_dry=st.sampled_from([False, True, False, False]),
    hook_refuses=st.sampled_from([False, False, True, False, False]),
    config=st.fixed_dictionaries(
        {
            "confidence_threshold": st.sampled_from([0, 50, 80]),
            "questions": st.sampled_from(["default", "ask"]),
            "on_low_confidence": st.sampled_from(["continue", "stop"]),
            "use_verifier": st.booleans(),
            "max_review_iterations": st.integers(1, 2),
            "pr_include_bots": st.booleans(),
            "pr_resolve_threads": st.booleans(),
            "pr_post_summary": st.booleans(),
        }
    ),
)
def test_pr_review_runs_end_consistently(
    data: st.DataObject,
    kinds: list[str],
    gh_failures: dict[int, str],
    change_failures: dict[int, str],
    phase: str,
    dry_run: bool,
    again_dry: bool,
    hook_refuses: bool,
    config: dict[str, Any],
) -> None:
    with pull_request_checkout() as (github, root):
        threads = seed(github, kinds)
        if hook_refuses:
            hook = root / ".git" / "hooks" / "pre-commit"
            hook.write_text("#!/bin/sh\necho 'lint says no' >&2\nexit 1\n")
            hook.chmod(0o755)
        world = PrWorld(data, root, gh_failures, change_failures)
        first = drive_checked(world, github, begin(world, phase, dry_run, config))
        again = drive_checked(world, github, begin(world, "6", again_dry, config))

        record = first.get("pr_review") or {}
        event(f"fix: {'committed' if record.get('commit') else 'none'}")
        kept = {str(thread["id"]) for thread in record.get("kept") or []}
        held = {
            str(d["thread_id"])
            for d in record.get("drafts") or []
            if d.get("dry_run") and d["label"] == "fix"
        }
        runs = (first["run_id"], again["run_id"])
        for thread in threads:
            posted = new_replies(thread)
            assert len(posted) <= 1, (thread.id, posted)  # never twice, across the run and its re-run
            assert not posted or thread.id in kept, (thread.id, posted)  # never to a thread left alone
            assert not posted or thread.id not in held, (thread.id, posted)
            assert all(any(body.endswith(reply_marker(run, thread.id)) for run in runs) for body in posted)
        summaries = [c.body for c in github.repo.pull_requests[7].comments if MARKER_START in c.body]
        assert len(summaries) <= 1, summaries
