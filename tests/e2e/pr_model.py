"""``/fixloop:fix-pr-review`` end to end: the pull request, the scripted agents and the sessions.

The sample project (tests/e2e/sample_repo) is checked out on the pull request's branch with ``origin`` on the
local GitHub server (fake_github); the real ``gh`` reaches that server through the environment
:func:`gh_env` gives the Claude Code CLI (the engine runs gh with the user's environment). The pull request
has six review threads: one resolved, one outdated, two that ask for a fix, one question and one request the
classifier disagrees with. The scripted comment classifier and reply writer (:func:`classifier`,
:func:`reply_writer`) read their task like a model would: the threads it lists, and what was done about each.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_runner import ClaudeRunner, RunResult, git
from fake_github import FakeGitHub, PullRequest, ReviewThread
from fixloop_model import (
    CLI_PERMISSION_MODE,
    COMMENT_NEW,
    COMMENT_OLD,
    EXCEPT_NEW,
    EXCEPT_OLD,
    Act,
    Behaviour,
    Edit,
    FixloopModel,
    Scenario,
    Turn,
    fixer,
    json_after,
)
from fixloop_session import RunRecord, read_run, run_ids
from scripted_api import ScriptedAPI

from fixloop.contracts.pr import CLASSIFIER_AGENT, REPLY_WRITER_AGENT
from fixloop.core.agent_names import FIXER_AGENT

JSON = dict[str, Any]

PR_NUMBER = 7
PR_BRANCH = "fix/inventory"
PR_AUTHOR = "alice"
REVIEWER = "bob"
# gh's settings the CLI (and so the hooks and the engine) must pass on to gh
GH_VARIABLES = (
    "GH_HOST",
    "GH_ENTERPRISE_TOKEN",
    "SSL_CERT_FILE",
    "GH_CONFIG_DIR",
    "GH_NO_UPDATE_NOTIFIER",
    "GH_PROMPT_DISABLED",
    "GH_PAGER",
    "HTTPS_PROXY",
    "https_proxy",
)
LOCAL_HOSTS = "127.0.0.1,localhost"

# What each thread's reviewer wrote (a thread is recognised by it), and the classifier's label for it.
FIX_EXCEPT = "Catching every Exception hides a corrupt stock file: catch FileNotFoundError only."
FIX_COMMENT = "This comment is wrong: an unknown SKU counts as 0, nothing raises KeyError."
QUESTION = "Why does low_stock_summary return a string rather than a dict?"
DISAGREE = "Please rename remove_items to take_items."
RESOLVED = "Sort the keys when saving."
OUTDATED = "Negative quantities should count as zero here."
LABELS: dict[str, tuple[str, str, str | None]] = {
    FIX_EXCEPT: ("fix", "The except clause swallows real errors.", "Catch FileNotFoundError only."),
    FIX_COMMENT: ("fix", "The comment contradicts the code.", "Say an unknown SKU counts as 0 units."),
    QUESTION: ("answer", "A question about the return type.", None),
    DISAGREE: ("disagree", "remove_items is the module's public name; callers use it.", None),
}
FIXED_STOCK_EDITS = (
    Edit("inventory/stock.py", EXCEPT_OLD, EXCEPT_NEW),
    Edit("inventory/stock.py", COMMENT_OLD, COMMENT_NEW),
)


# --------------------------------------------------------------------------------------------------
# The pull request
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewThreads:
    """The six threads of the seeded pull request."""

    pr: PullRequest
    resolved: ReviewThread
    outdated: ReviewThread
    fix_except: ReviewThread
    fix_comment: ReviewThread
    question: ReviewThread
    disagree: ReviewThread

    @property
    def answered(self) -> list[ReviewThread]:
        """The four threads the run replies to, in the pull request's order."""
        return [self.fix_except, self.fix_comment, self.question, self.disagree]

    @property
    def fixed(self) -> list[ReviewThread]:
        return [self.fix_except, self.fix_comment]


def seed_pull_request(github: FakeGitHub, *, state: str = "OPEN") -> ReviewThreads:
    """Pull request #7 (alice's, branch fix/inventory) with its six review threads, a review and a comment."""
    with github.model.lock:
        pr = github.repo.add_pull_request(
            PR_NUMBER, title="Stock file handling", head_ref_name=PR_BRANCH, author=PR_AUTHOR, state=state
        )
        review = pr.add_review(author=REVIEWER, body="A few things to look at.", state="CHANGES_REQUESTED")
        stock, report = "inventory/stock.py", "inventory/report.py"
        resolved = pr.add_thread(path=stock, line=21, body=RESOLVED, author=REVIEWER, is_resolved=True)
        outdated = pr.add_thread(
            path=report, line=None, original_line=9, body=OUTDATED, author=REVIEWER, is_outdated=True
        )
        threads = ReviewThreads(
            pr,
            resolved,
            outdated,
            pr.add_thread(path=stock, line=14, body=FIX_EXCEPT, author=REVIEWER, review=review),
            pr.add_thread(path=stock, line=27, body=FIX_COMMENT, author=REVIEWER, review=review),
            pr.add_thread(
                path=report, line=15, body=QUESTION, author="carol", replies=[(PR_AUTHOR, "Good question.")]
            ),
            pr.add_thread(path=stock, line=24, body=DISAGREE, author=REVIEWER, review=review),
        )
        pr.add_comment(author=REVIEWER, body="Thanks for the quick turnaround.")
    return threads


def gh_env(github: FakeGitHub, **overrides: str) -> dict[str, str]:
    """What the CLI's environment needs for the real gh to reach the local server (and nothing else of
    the server's gh environment: git and the CLI keep theirs)."""
    env = github.env
    kept = {name: env[name] for name in GH_VARIABLES} | {"GH_TOKEN": "", "GITHUB_TOKEN": ""}
    # gh reaches the server as its HTTPS proxy; the CLI's own requests to the scripted API must not
    return kept | {"NO_PROXY": LOCAL_HOSTS, "no_proxy": LOCAL_HOSTS} | overrides


def path_without_gh(directory: Path) -> str:
    """A PATH of one directory linking every command of this PATH but ``gh``: a machine without gh."""
    directory.mkdir(parents=True, exist_ok=True)
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            link, target = directory / name, Path(folder) / name
            if name == "gh" or link.exists() or link.is_symlink():
                continue
            if target.is_file() and os.access(target, os.X_OK):
                link.symlink_to(target)
    return str(directory)


def checkout_pr(project: Path, github: FakeGitHub, branch: str = PR_BRANCH) -> None:
    """The sample project becomes a checkout of octo/demo on ``branch`` (origin on the local server)."""
    git(project, "remote", "add", "origin", github.remote_url())
    git(project, "checkout", "-q", "-b", branch)


def configure(project: Path, **settings: Any) -> None:
    """Merge ``settings`` into the project's .claude/fixloop.json, committed."""
    path = project / ".claude" / "fixloop.json"
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8")) | settings, indent=2) + "\n")
    git(project, "commit", "-q", "-m", "fixloop settings", "--", ".claude/fixloop.json")


# --------------------------------------------------------------------------------------------------
# The scripted agents
# --------------------------------------------------------------------------------------------------


def _threads(turn: Turn) -> list[JSON]:
    found = json_after(turn.task, "Threads:\n")
    if not isinstance(found, list):
        raise AssertionError(f"{turn.agent}: its task lists no threads: {turn.task[:300]!r}")
    return [dict(item) for item in found]


def _opening(thread: Mapping[str, Any]) -> str:
    return str(thread["comments"][0]["body"])


def classifier(confidence: int = 92) -> Behaviour:
    """The comment classifier: each thread it is given labelled as LABELS says for its opening comment."""

    def behave(turn: Turn) -> Act:
        labels = []
        for thread in _threads(turn):
            label, reason, suggestion = LABELS[_opening(thread)]
            item: JSON = {"thread_id": thread["thread_id"], "label": label, "confidence": confidence}
            labels.append(item | {"reason": reason} | ({"suggestion": suggestion} if suggestion else {}))
        return {"status": "success", "agent": CLASSIFIER_AGENT, "classifications": labels}

    return behave


def reply_body(thread: Mapping[str, Any]) -> str:
    """The reply the scripted writer drafts from what the task says was done about ``thread``."""
    outcome = thread["outcome"]
    if outcome.get("result") == "fixed":
        return f"Fixed in {outcome['commit']}: {LABELS[_opening(thread)][2]}"
    if outcome.get("result") == "dry run":
        return f"Would change: {outcome['would_change']}"
    if outcome["label"] == "answer":
        return "A string is what the report prints; callers never read the parts."
    if outcome["label"] == "disagree":
        return f"I'd keep the name: {outcome['reason']}"
    return f"Not changed: {outcome.get('why') or outcome['reason']}"


def reply_writer() -> Behaviour:
    """The reply writer: one reply per thread given (:func:`reply_body`)."""

    def behave(turn: Turn) -> Act:
        replies = [{"thread_id": t["thread_id"], "body": reply_body(t)} for t in _threads(turn)]
        return {"status": "success", "agent": REPLY_WRITER_AGENT, "replies": replies}

    return behave


def pr_scenario() -> Scenario:
    """The classifier and writer above, the fixer making both stock.py fixes in its one pass (phase 4's task
    names no review round), the review of phase 7 clean."""
    return Scenario(
        agents={
            CLASSIFIER_AGENT: classifier(),
            REPLY_WRITER_AGENT: reply_writer(),
            FIXER_AGENT: fixer({0: FIXED_STOCK_EDITS}),
        }
    )


# --------------------------------------------------------------------------------------------------
# Sessions
# --------------------------------------------------------------------------------------------------


@dataclass
class PrSession:
    result: RunResult
    api: ScriptedAPI
    model: FixloopModel
    project: Path
    run: RunRecord

    @property
    def requests(self) -> list[JSON]:
        return self.result.message_requests()

    @property
    def final(self) -> str:
        return self.result.result_text or ""


def new_pr_project(runner: ClaudeRunner, github: FakeGitHub, branch: str = PR_BRANCH) -> Path:
    """A fresh copy of the sample project (everything committed) checked out on ``branch``."""
    project = runner.new_project()
    checkout_pr(project, github, branch)
    return project


def run_command(
    runner: ClaudeRunner,
    api: ScriptedAPI,
    model: FixloopModel,
    project: Path,
    arguments: str,
    *,
    env: Mapping[str, str] | None = None,
) -> PrSession:
    """``/fixloop:fix-pr-review ARGUMENTS`` in ``project``; the session and the run it started.
    AssertionError when the CLI failed, the model met a problem or no new run was started."""
    before = set(run_ids(project))
    problems = len(model.problems)
    started = time.monotonic()
    result = runner.run(
        f"/fixloop:fix-pr-review {arguments}".strip(),
        project_dir=project,
        permission_mode=CLI_PERMISSION_MODE,
        env=env,
    )
    print(f"/fixloop:fix-pr-review {arguments}: {time.monotonic() - started:.2f}s")
    failures = []
    if (result.exit_code, result.timed_out, result.is_error) != (0, False, False):
        failures.append(f"the CLI failed: {result.summary()}")
    failures += [f"scripted model: {problem}" for problem in model.problems[problems:]]
    failures += [f"no sender for request {r.seq}" for r in api.unmatched]
    new = sorted(set(run_ids(project)) - before)
    if len(new) != 1:
        failures.append(f"expected one new run, found {new}")
    if failures:
        raise AssertionError("\n".join(failures))
    return PrSession(result, api, model, project, read_run(project, new[0]))
