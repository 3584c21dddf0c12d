"""A local GitHub API server for driving the real ``gh`` CLI in tests (standard library only).

``gh`` (2.23) talks to it as to a GitHub Enterprise host: REST under ``https://HOST/api/v3/`` and GraphQL at
``https://HOST/api/graphql``. The host is the name :data:`GITHUB_HOST` (port 443, never resolved): ``gh``
reaches it through ``HTTPS_PROXY`` pointing at this server, which answers ``CONNECT`` for its own names only
and then speaks TLS with a certificate from a throwaway CA (``SSL_CERT_FILE``). A name without a port is
needed because ``gh`` drops the port of a git remote's URL when it matches remotes to ``GH_HOST``, so
``GH_HOST=127.0.0.1:PORT`` works for ``gh api`` and ``-R``/``GH_REPO`` but never for a repository's
``origin``. :attr:`FakeGitHub.direct_env` gives that port form too (TLS straight to ``127.0.0.1:PORT``).

The server holds an in-memory :class:`GitHubModel` (repositories, pull requests, review threads, reviews,
issue comments, Actions workflows, runs, jobs with step logs, the authenticated user), answers GraphQL with a
small executor (parse, validate against a schema subset, execute with cursor pagination) and REST with
GitHub's documented shapes, checks the token on every request, and records every request in
:attr:`FakeGitHub.requests`. Use it in-process (the ``github`` and ``github_checkout`` fixtures of
conftest.py do this)::

    with FakeGitHub(tmp_path / "gh") as github:
        checkout = make_git_repo(tmp_path / "checkout", github)  # origin: https://HOST/octo/demo.git
        pr = github.repo.add_pull_request(7, head_ref_name="fix/parser")
        pr.add_thread(path="src/app.py", line=3, body="Rename this", author="reviewer")
        subprocess.run(["gh", "pr", "view", "7", "--json", "title"], env=github.env, cwd=checkout)

Served: what ``gh auth status``, ``gh api``, ``gh pr view/list --json``, ``gh pr comment``, ``gh repo view
--json`` and ``gh run view/list`` (``--json``, ``--log-failed``, ``--job``) ask for, and the queries and
mutations fixloop's engine sends (``fixloop.github.queries``, imported here: REVIEW_THREADS_QUERY and the
others). A field outside the schema subset gets GitHub's "Field 'x' doesn't exist on
type 'Y'" error (so does the plain ``gh pr view``, which asks for checks, projects and reactions).
"""

from __future__ import annotations

import base64
import bisect
import io
import json
import os
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import threading
import traceback
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlencode, urlsplit

from fixloop.github import queries

GITHUB_HOST = "github.fixloop.test"
BLOB_HOST = "pipelines.fixloop.test"
DEFAULT_TOKEN = "ghp_fixloopTestToken0123456789abcdefABCD"
DEFAULT_OWNER = "octo"
DEFAULT_REPO = "demo"
VIEWER_LOGIN = "fixloop-bot"
TOKEN_SCOPES = "repo, read:org, workflow"
START_TIME = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
JSON = dict[str, Any]

# The engine's own GraphQL texts: the server is tested with exactly what fixloop sends.
REVIEW_THREADS_QUERY = queries.REVIEW_THREADS_QUERY
THREAD_COMMENTS_QUERY = queries.THREAD_COMMENTS_QUERY
REVIEWS_QUERY = queries.REVIEWS_QUERY
CONVERSATION_QUERY = queries.CONVERSATION_QUERY
LATEST_COMMENTS_QUERY = queries.LATEST_COMMENTS_QUERY
REPLY_TO_THREAD_MUTATION = queries.REPLY_TO_THREAD_MUTATION
RESOLVE_THREAD_MUTATION = queries.RESOLVE_THREAD_MUTATION

# --------------------------------------------------------------------------------------------------
# Certificates
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Certificates:
    ca_file: Path
    cert_file: Path
    key_file: Path


def make_certificates(directory: Path) -> Certificates:
    """A throwaway CA and a server certificate (EC P-256, 2 days) for the fake hosts, localhost and
    127.0.0.1, made with the ``openssl`` command in ``directory``."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError(
            "the openssl command is needed for the test certificates (apt-get install openssl)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_file = str(directory / "ca.key"), str(directory / "ca.pem")
    key_file, cert_file, csr_file = str(directory / "server.key"), str(directory / "server.pem"), "server.csr"
    names = f"DNS:{GITHUB_HOST},DNS:{BLOB_HOST},DNS:localhost,IP:127.0.0.1"
    (directory / "server.ext").write_text(
        f"subjectAltName={names}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\n"
    )
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    ca = [
        "-x509",
        "-days",
        "2",
        "-subj",
        "/CN=fixloop test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
    ]
    ca += ["-addext", "keyUsage=critical,keyCertSign", "-keyout", ca_key, "-out", ca_file]
    csr = ["-keyout", key_file, "-out", csr_file, "-subj", f"/CN={GITHUB_HOST}"]
    sign = ["-in", csr_file, "-out", cert_file, "-CA", ca_file, "-CAkey", ca_key, "-CAcreateserial"]
    sign += ["-days", "2", "-extfile", "server.ext"]
    for command in (
        [openssl, "req", *key, *ca],
        [openssl, "req", *key, *csr],
        [openssl, "x509", "-req", *sign],
    ):
        done = subprocess.run(command, cwd=directory, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"openssl {command[1]} failed: {done.stderr.strip()}")
    return Certificates(Path(ca_file), Path(cert_file), Path(key_file))


# --------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(eq=False)
class Actor:
    """A user, bot or organization. ``login`` is the GraphQL login: a bot ``name[bot]`` is ``name`` there
    and ``name[bot]`` in REST, as on GitHub. ``association`` is what GitHub's ``authorAssociation`` says of
    the actor's comments (one repository is served per actor): COLLABORATOR unless a test sets it
    (``model.actor("mallory", association="NONE")``); the viewer is OWNER."""

    login: str
    database_id: int
    id: str
    kind: str = "User"
    name: str | None = None
    association: str = "COLLABORATOR"

    @property
    def typename(self) -> str:
        return self.kind

    @property
    def rest_login(self) -> str:
        return f"{self.login}[bot]" if self.kind == "Bot" else self.login


@dataclass(eq=False)
class IssueComment:
    id: str
    database_id: int
    pull_request: PullRequest
    author: Actor
    body: str
    created_at: str
    typename = "IssueComment"

    @property
    def anchor(self) -> str:
        return f"issuecomment-{self.database_id}"


@dataclass(eq=False)
class Review:
    id: str
    database_id: int
    pull_request: PullRequest
    author: Actor
    body: str
    state: str
    submitted_at: str
    typename = "PullRequestReview"

    @property
    def anchor(self) -> str:
        return f"pullrequestreview-{self.database_id}"


@dataclass(eq=False)
class ReviewComment:
    id: str
    database_id: int
    thread: ReviewThread
    author: Actor
    body: str
    created_at: str
    reply_to: ReviewComment | None = None
    review: Review | None = None
    typename = "PullRequestReviewComment"

    @property
    def anchor(self) -> str:
        return f"discussion_r{self.database_id}"


@dataclass(eq=False)
class ReviewThread:
    id: str
    pull_request: PullRequest
    path: str
    line: int | None
    original_line: int | None
    is_resolved: bool = False
    is_outdated: bool = False
    resolved_by: Actor | None = None
    comments: list[ReviewComment] = field(default_factory=list)
    typename = "PullRequestReviewThread"

    def add_reply(self, body: str, author: str | None = None) -> ReviewComment:
        """A reply from ``author`` (default: the authenticated user), as the reply mutation adds one."""
        model = self.pull_request.repository.model
        who = model.actor(author) if author else model.viewer
        first = self.comments[0] if self.comments else None
        comment = ReviewComment(
            model.node_id("PRRC"), model.database_id(), self, who, body, model.tick(), reply_to=first
        )
        self.comments.append(comment)
        return model.register(comment)


@dataclass(eq=False)
class PullRequest:
    repository: Repository
    number: int
    id: str
    database_id: int
    title: str
    body: str
    state: str
    head_ref_name: str
    base_ref_name: str
    head_ref_oid: str
    author: Actor
    is_draft: bool
    created_at: str
    threads: list[ReviewThread] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)
    comments: list[IssueComment] = field(default_factory=list)
    typename = "PullRequest"

    def add_thread(
        self,
        *,
        path: str,
        line: int | None,
        body: str,
        author: str = "reviewer",
        replies: Sequence[tuple[str, str]] = (),
        is_resolved: bool = False,
        is_outdated: bool = False,
        original_line: int | None = None,
        review: Review | None = None,
    ) -> ReviewThread:
        """A review thread on ``path``:``line`` opened by ``author`` with ``body``, then ``replies`` as
        ``(author, body)`` pairs. An outdated thread has ``line=None`` and keeps ``original_line``."""
        model = self.repository.model
        thread = ReviewThread(
            model.node_id("PRRT"),
            self,
            path,
            line,
            original_line if original_line is not None else line,
            is_resolved=is_resolved,
            is_outdated=is_outdated,
        )
        first = ReviewComment(
            model.node_id("PRRC"), model.database_id(), thread, model.actor(author), body, model.tick()
        )
        first.review = review
        thread.comments.append(model.register(first))
        for reply_author, reply_body in replies:
            thread.add_reply(reply_body, reply_author)
        if is_resolved:
            thread.resolved_by = model.viewer
        self.threads.append(thread)
        return model.register(thread)

    def add_review(self, *, author: str = "reviewer", body: str = "", state: str = "COMMENTED") -> Review:
        """A submitted review; ``state`` is APPROVED, CHANGES_REQUESTED, COMMENTED or DISMISSED."""
        model = self.repository.model
        review = Review(
            model.node_id("PRR"), model.database_id(), self, model.actor(author), body, state, model.tick()
        )
        self.reviews.append(review)
        return model.register(review)

    def add_comment(self, *, body: str, author: str | None = None) -> IssueComment:
        """A comment on the conversation tab (an issue comment); ``author`` defaults to the viewer."""
        model = self.repository.model
        who = model.actor(author) if author else model.viewer
        comment = IssueComment(model.node_id("IC"), model.database_id(), self, who, body, model.tick())
        self.comments.append(comment)
        return model.register(comment)


@dataclass(eq=False)
class Step:
    """A job step; ``log`` is its output without the timestamps GitHub prefixes to every line."""

    name: str
    conclusion: str | None = "success"
    log: str = ""
    status: str = "completed"
    number: int = 0
    started_at: str = ""
    completed_at: str = ""


@dataclass(eq=False)
class Job:
    name: str
    steps: list[Step] = field(default_factory=list)
    conclusion: str | None = None
    status: str = "completed"
    id: int = 0
    node_id: str = ""
    run: WorkflowRun | None = None
    started_at: str = ""
    completed_at: str = ""


@dataclass(eq=False)
class Workflow:
    id: int
    node_id: str
    name: str
    path: str
    state: str = "active"


@dataclass(eq=False)
class WorkflowRun:
    repository: Repository
    id: int
    node_id: str
    workflow: Workflow
    head_branch: str
    head_sha: str
    status: str
    conclusion: str | None
    event: str
    run_number: int
    display_title: str
    created_at: str
    updated_at: str
    jobs: list[Job] = field(default_factory=list)
    run_attempt: int = 1


_FAILED = {"failure", "timed_out", "cancelled", "startup_failure", "action_required"}


@dataclass(eq=False)
class Repository:
    model: GitHubModel
    owner: Actor
    name: str
    id: str
    database_id: int
    default_branch: str = "main"
    pull_requests: dict[int, PullRequest] = field(default_factory=dict)
    workflows: dict[int, Workflow] = field(default_factory=dict)
    runs: dict[int, WorkflowRun] = field(default_factory=dict)
    typename = "Repository"

    @property
    def name_with_owner(self) -> str:
        return f"{self.owner.login}/{self.name}"

    def add_pull_request(
        self,
        number: int | None = None,
        *,
        title: str = "Fix the parser",
        head_ref_name: str = "fix/parser",
        base_ref_name: str | None = None,
        head_ref_oid: str = "1f0e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c",
        author: str = "octocat",
        state: str = "OPEN",
        body: str = "",
        is_draft: bool = False,
    ) -> PullRequest:
        """A pull request (``number`` defaults to the next free one); ``state`` is OPEN, CLOSED or MERGED."""
        model = self.model
        number = number if number is not None else max(self.pull_requests, default=0) + 1
        pr = PullRequest(
            self,
            number,
            model.node_id("PR"),
            model.database_id(),
            title,
            body,
            state,
            head_ref_name,
            base_ref_name or self.default_branch,
            head_ref_oid,
            model.actor(author),
            is_draft,
            model.tick(),
        )
        self.pull_requests[number] = pr
        return model.register(pr)

    def add_workflow(self, name: str, path: str | None = None) -> Workflow:
        for workflow in self.workflows.values():
            if workflow.name == name:
                return workflow
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "workflow"
        workflow_id = 61000000 + len(self.workflows) + 1
        workflow = Workflow(
            workflow_id, self.model.node_id("W"), name, path or f".github/workflows/{slug}.yml"
        )
        self.workflows[workflow_id] = workflow
        return workflow

    def add_run(
        self,
        *,
        jobs: Sequence[Job],
        workflow: str = "CI",
        head_branch: str = "fix/parser",
        head_sha: str = "1f0e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c",
        status: str = "completed",
        conclusion: str | None = None,
        event: str = "pull_request",
        display_title: str | None = None,
        run_id: int | None = None,
    ) -> WorkflowRun:
        """An Actions run of ``workflow`` with ``jobs`` (ids, step numbers and times are assigned here).
        A job's conclusion defaults to failure when one of its steps failed, the run's likewise."""
        model = self.model
        run_id = run_id if run_id is not None else 8000000000 + model.database_id()
        created = model.tick()
        run = WorkflowRun(
            self,
            run_id,
            model.node_id("WFR"),
            self.add_workflow(workflow),
            head_branch,
            head_sha,
            status,
            conclusion,
            event,
            len(self.runs) + 1,
            display_title or workflow,
            created,
            created,
        )
        moment = datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        for job in jobs:
            job.id, job.node_id, job.run = 25000000000 + model.database_id(), model.node_id("CR"), run
            job.started_at = _iso(moment)
            for number, step in enumerate(job.steps, start=1):
                step.number, step.started_at = number, _iso(moment)
                moment += timedelta(seconds=5)
                step.completed_at = _iso(moment)
            job.completed_at = _iso(moment)
            if job.conclusion is None and job.status == "completed":
                failed = any(step.conclusion in _FAILED for step in job.steps)
                job.conclusion = "failure" if failed else "success"
            run.jobs.append(job)
        run.updated_at = _iso(moment)
        if run.conclusion is None and status == "completed":
            run.conclusion = "failure" if any(job.conclusion in _FAILED for job in jobs) else "success"
        self.runs[run_id] = run
        return run


_Node = TypeVar("_Node", Actor, Repository, PullRequest, ReviewThread, ReviewComment, Review, IssueComment)


class GitHubModel:
    """Everything the server knows. The server reads and changes it under ``lock``; tests seed it while no
    ``gh`` command is running (or hold ``lock``)."""

    def __init__(self, viewer: str = VIEWER_LOGIN) -> None:
        self.lock = threading.RLock()
        self._sequence = 0
        self._clock = START_TIME
        self.actors: dict[str, Actor] = {}
        self.repositories: dict[tuple[str, str], Repository] = {}
        self.nodes: dict[str, Any] = {}
        self.viewer = self.actor(viewer, association="OWNER")
        self.viewer.name = "Fixloop Bot"

    def _next(self) -> int:
        self._sequence += 1
        return self._sequence

    def database_id(self) -> int:
        return 1000000 + self._next()

    def node_id(self, prefix: str) -> str:
        encoded = base64.urlsafe_b64encode(f"fixloop:{self._next():08d}".encode()).decode().rstrip("=")
        return f"{prefix}_kwDO{encoded}"

    def tick(self) -> str:
        """The next timestamp: one minute after the previous one, so seeded data is ordered and stable."""
        self._clock += timedelta(minutes=1)
        return _iso(self._clock)

    def register(self, node: _Node) -> _Node:
        self.nodes[node.id] = node
        return node

    def actor(self, login: str, *, kind: str | None = None, association: str | None = None) -> Actor:
        """The actor named ``login`` (made on first use): a Bot for ``name[bot]``, else ``kind`` (User or
        Organization, default User). ``association`` sets its authorAssociation (OWNER, MEMBER,
        COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, NONE, ...)."""
        key = login.lower()
        if key not in self.actors:
            kind = "Bot" if login.endswith("[bot]") else kind or "User"
            prefix = {"Bot": "BOT", "Organization": "O"}.get(kind, "U")
            actor = Actor(login.removesuffix("[bot]"), self.database_id(), self.node_id(prefix), kind)
            self.actors[key] = self.register(actor)
        if association is not None:
            self.actors[key].association = association
        return self.actors[key]

    def add_repository(self, owner: str, name: str, *, default_branch: str = "main") -> Repository:
        repo = Repository(
            self,
            self.actor(owner),
            name,
            self.node_id("R"),
            self.database_id(),
            default_branch=default_branch,
        )
        self.repositories[(owner.lower(), name.lower())] = repo
        return self.register(repo)

    def repository(self, owner: str, name: str) -> Repository | None:
        return self.repositories.get((owner.lower(), name.lower()))


# --------------------------------------------------------------------------------------------------
# GraphQL: parsing
# --------------------------------------------------------------------------------------------------


class GraphQLError(Exception):
    """An error in GitHub's GraphQL error shape; ``type`` (e.g. NOT_FOUND) is set for execution errors."""

    def __init__(
        self,
        message: str,
        *,
        type: str | None = None,
        location: tuple[int, int] | None = None,
        path: list[str | int] | None = None,
        extensions: JSON | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.type, self.location, self.path, self.extensions = (
            message,
            type,
            location,
            path,
            extensions,
        )

    def to_json(self) -> JSON:
        out: JSON = {}
        if self.type:
            out["type"] = self.type
        if self.path is not None:
            out["path"] = self.path
        if self.extensions:
            out["extensions"] = self.extensions
        if self.location:
            out["locations"] = [{"line": self.location[0], "column": self.location[1]}]
        out["message"] = self.message
        return out


@dataclass(frozen=True)
class Variable:
    name: str


@dataclass(frozen=True)
class EnumValue:
    name: str


@dataclass
class FieldNode:
    name: str
    alias: str | None
    arguments: dict[str, Any]
    directives: list[tuple[str, dict[str, Any]]]
    selections: list[Any] | None
    location: tuple[int, int]

    @property
    def key(self) -> str:
        return self.alias or self.name


@dataclass
class InlineFragment:
    type_condition: str | None
    directives: list[tuple[str, dict[str, Any]]]
    selections: list[Any]
    location: tuple[int, int]


@dataclass
class FragmentSpread:
    name: str
    directives: list[tuple[str, dict[str, Any]]]
    location: tuple[int, int]


@dataclass
class Operation:
    kind: str
    name: str | None
    variables: dict[str, tuple[str, Any, bool]]  # name -> (type, default, has default)
    selections: list[Any]
    location: tuple[int, int]


@dataclass
class Document:
    operations: list[Operation]
    fragments: dict[str, tuple[str, list[Any]]]


_TOKEN = re.compile(
    r'(?P<skip>[\s,\ufeff]+|#[^\n\r]*)|(?P<block>"""(?:\\"""|[^"]|"(?!""))*""")'
    r'|(?P<string>"(?:[^"\\\n\r]|\\.)*")|(?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)'
    r"|(?P<name>[_A-Za-z][_0-9A-Za-z]*)|(?P<punct>\.\.\.|[!$&():=@\[\]{}|])"
)
_PUNCT_NAMES = {"{": "LCURLY", "}": "RCURLY", "(": "LPAREN", ")": "RPAREN", "[": "LBRACKET", "]": "RBRACKET"}


class _Parser:
    def __init__(self, source: str) -> None:
        self.tokens: list[tuple[str, str, tuple[int, int]]] = []
        line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", source)]
        position = 0
        while position < len(source):
            match = _TOKEN.match(source, position)
            line = bisect.bisect_right(line_starts, position)
            where = (line, position - line_starts[line - 1] + 1)
            if match is None:
                raise GraphQLError(
                    f'Parse error on "{source[position]}" at [{where[0]}, {where[1]}]', location=where
                )
            if match.lastgroup != "skip":
                self.tokens.append((str(match.lastgroup), match.group(), where))
            position = match.end()
        self.index = 0

    def peek(self, value: str | None = None) -> bool:
        if self.index >= len(self.tokens):
            return False
        kind, text, _ = self.tokens[self.index]
        return value is None or (text == value and kind in ("punct", "name"))

    def take(self, value: str | None = None, kind: str | None = None) -> tuple[str, str, tuple[int, int]]:
        if self.index >= len(self.tokens):
            raise GraphQLError("Unexpected end of document")
        token = self.tokens[self.index]
        if (value is not None and token[1] != value) or (kind is not None and token[0] != kind):
            label = _PUNCT_NAMES.get(token[1], token[0].upper())
            raise GraphQLError(
                f'Parse error on "{token[1]}" ({label}) at [{token[2][0]}, {token[2][1]}]', location=token[2]
            )
        self.index += 1
        return token

    def document(self) -> Document:
        doc = Document([], {})
        while self.index < len(self.tokens):
            if self.peek("fragment"):
                self.take()
                name = self.take(kind="name")[1]
                self.take("on")
                condition = self.take(kind="name")[1]
                self.directives()
                doc.fragments[name] = (condition, self.selection_set())
            elif self.peek("{"):
                location = self.tokens[self.index][2]
                doc.operations.append(Operation("query", None, {}, self.selection_set(), location))
            else:
                _, operation_kind, location = self.take(kind="name")
                if operation_kind not in ("query", "mutation", "subscription"):
                    line, column = location
                    raise GraphQLError(
                        f'Parse error on "{operation_kind}" (IDENTIFIER) at [{line}, {column}]',
                        location=location,
                    )
                operation_name = (
                    self.take(kind="name")[1]
                    if self.peek() and self.tokens[self.index][0] == "name"
                    else None
                )
                variables = self.variable_definitions()
                self.directives()
                doc.operations.append(
                    Operation(operation_kind, operation_name, variables, self.selection_set(), location)
                )
        return doc

    def variable_definitions(self) -> dict[str, tuple[str, Any, bool]]:
        found: dict[str, tuple[str, Any, bool]] = {}
        if not self.peek("("):
            return found
        self.take("(")
        while not self.peek(")"):
            self.take("$")
            name = self.take(kind="name")[1]
            self.take(":")
            type_ref = self.type_ref()
            has_default = self.peek("=")
            default = None
            if has_default:
                self.take("=")
                default = self.value()
            self.directives()
            found[name] = (type_ref, default, has_default)
        self.take(")")
        return found

    def type_ref(self) -> str:
        if self.peek("["):
            self.take("[")
            inner = self.type_ref()
            self.take("]")
            text = f"[{inner}]"
        else:
            text = self.take(kind="name")[1]
        if self.peek("!"):
            self.take("!")
            text += "!"
        return text

    def directives(self) -> list[tuple[str, dict[str, Any]]]:
        found = []
        while self.peek("@"):
            self.take("@")
            found.append((self.take(kind="name")[1], self.arguments()))
        return found

    def arguments(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.peek("("):
            self.take("(")
            while not self.peek(")"):
                name = self.take(kind="name")[1]
                self.take(":")
                found[name] = self.value()
            self.take(")")
        return found

    def value(self) -> Any:
        kind, text, _ = self.take()
        if text == "$" and kind == "punct":
            return Variable(self.take(kind="name")[1])
        if kind == "number":
            return float(text) if any(c in text for c in ".eE") else int(text)
        if kind == "string":
            return json.loads(text)
        if kind == "block":
            return _block_string(text[3:-3].replace('\\"""', '"""'))
        if kind == "name":
            return {"true": True, "false": False, "null": None}.get(text, EnumValue(text))
        if text == "[":
            items = []
            while not self.peek("]"):
                items.append(self.value())
            self.take("]")
            return items
        if text == "{":
            fields: dict[str, Any] = {}
            while not self.peek("}"):
                name = self.take(kind="name")[1]
                self.take(":")
                fields[name] = self.value()
            self.take("}")
            return fields
        self.index -= 1
        self.take(kind="name")  # raises the parse error for this token
        return None

    def selection_set(self) -> list[Any]:
        self.take("{")
        selections: list[Any] = []
        while not self.peek("}"):
            if self.peek("..."):
                location = self.take("...")[2]
                if self.peek("on"):
                    self.take("on")
                    condition = self.take(kind="name")[1]
                    directives = self.directives()
                    selections.append(InlineFragment(condition, directives, self.selection_set(), location))
                elif self.peek("@") or self.peek("{"):
                    directives = self.directives()
                    selections.append(InlineFragment(None, directives, self.selection_set(), location))
                else:
                    name = self.take(kind="name")[1]
                    selections.append(FragmentSpread(name, self.directives(), location))
                continue
            _, name, location = self.take(kind="name")
            alias = None
            if self.peek(":"):
                self.take(":")
                alias, name = name, self.take(kind="name")[1]
            arguments = self.arguments()
            directives = self.directives()
            inner = self.selection_set() if self.peek("{") else None
            selections.append(FieldNode(name, alias, arguments, directives, inner, location))
        self.take("}")
        return selections


def _block_string(raw: str) -> str:
    lines = raw.splitlines()
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    common = min(indents, default=0)
    lines = lines[:1] + [line[common:] for line in lines[1:]]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def parse_graphql(source: str) -> Document:
    return _Parser(source).document()


# --------------------------------------------------------------------------------------------------
# GraphQL: the schema subset
# --------------------------------------------------------------------------------------------------

# Each type's fields as "name(argument other): Type"; a field whose type ends in Connection also takes
# first/after/last/before, and its connection and edge types are made from the node type.
_SCHEMA_SOURCE = """
Query { viewer: User  repository(owner name followRenames): Repository  node(id): Node  nodes(ids): [Node]
  user(login): User }
Mutation { addPullRequestReviewThreadReply(input): AddPullRequestReviewThreadReplyPayload
  resolveReviewThread(input): ResolveReviewThreadPayload
  unresolveReviewThread(input): UnresolveReviewThreadPayload
  addComment(input): AddCommentPayload }
Node { id: ID }
Actor { login: String  avatarUrl(size): URI  url: URI  resourcePath: URI }
RepositoryOwner { id: ID  login: String  avatarUrl(size): URI  url: URI  resourcePath: URI }
User { id: ID  databaseId: Int  login: String  name: String  avatarUrl(size): URI  url: URI  resourcePath: URI
  isSiteAdmin: Boolean  organizations: OrganizationConnection }
Bot { id: ID  databaseId: Int  login: String  avatarUrl(size): URI  url: URI  resourcePath: URI }
Organization { id: ID  databaseId: Int  login: String  name: String  avatarUrl(size): URI  url: URI
  resourcePath: URI }
Repository { id: ID  databaseId: Int  name: String  nameWithOwner: String  owner: RepositoryOwner  url: URI
  isPrivate: Boolean  isFork: Boolean  isArchived: Boolean  viewerPermission: RepositoryPermission
  defaultBranchRef: Ref  parent: Repository  pullRequest(number): PullRequest
  pullRequests(states headRefName baseRefName labels orderBy): PullRequestConnection }
Ref { id: ID  name: String  prefix: String  target: Commit }
Commit { id: ID  oid: GitObjectID  abbreviatedOid: String }
PullRequest { id: ID  databaseId: Int  number: Int  title: String  body: String  state: PullRequestState
  url: URI  isDraft: Boolean  closed: Boolean  merged: Boolean  headRefName: String  baseRefName: String
  headRefOid: GitObjectID  author: Actor  createdAt: DateTime  updatedAt: DateTime  isCrossRepository: Boolean
  headRepositoryOwner: RepositoryOwner  headRepository: Repository  repository: Repository
  maintainerCanModify: Boolean  reviewDecision: PullRequestReviewDecision
  comments(orderBy): IssueCommentConnection  reviews(states author): PullRequestReviewConnection
  reviewThreads: PullRequestReviewThreadConnection  assignees: UserConnection  labels: LabelConnection }
PullRequestReviewThread { id: ID  isResolved: Boolean  isOutdated: Boolean  isCollapsed: Boolean  path: String
  line: Int  originalLine: Int  startLine: Int  originalStartLine: Int  diffSide: DiffSide  resolvedBy: User
  viewerCanReply: Boolean  viewerCanResolve: Boolean  viewerCanUnresolve: Boolean  pullRequest: PullRequest
  repository: Repository  comments(skip): PullRequestReviewCommentConnection }
PullRequestReviewComment { id: ID  databaseId: Int  author: Actor  authorAssociation: CommentAuthorAssociation
  body: String  bodyText: String  createdAt: DateTime  updatedAt: DateTime  publishedAt: DateTime  url: URI
  path: String  line: Int  originalLine: Int  outdated: Boolean  diffHunk: String
  replyTo: PullRequestReviewComment  pullRequestReview: PullRequestReview  pullRequest: PullRequest
  isMinimized: Boolean  includesCreatedEdit: Boolean  viewerDidAuthor: Boolean
  reactionGroups: [ReactionGroup] }
PullRequestReview { id: ID  databaseId: Int  author: Actor  authorAssociation: CommentAuthorAssociation
  body: String  bodyText: String  state: PullRequestReviewState  submittedAt: DateTime  createdAt: DateTime
  url: URI  commit: Commit  pullRequest: PullRequest  includesCreatedEdit: Boolean
  reactionGroups: [ReactionGroup]  comments: PullRequestReviewCommentConnection }
IssueComment { id: ID  databaseId: Int  author: Actor  authorAssociation: CommentAuthorAssociation
  body: String  bodyText: String  createdAt: DateTime  updatedAt: DateTime  url: URI
  includesCreatedEdit: Boolean  isMinimized: Boolean  minimizedReason: String  viewerDidAuthor: Boolean
  reactionGroups: [ReactionGroup]
  pullRequest: PullRequest }
ReactionGroup { content: ReactionContent  users: ReactingUserConnection }
Label { id: ID  name: String  color: String  description: String }
PageInfo { hasNextPage: Boolean  hasPreviousPage: Boolean  startCursor: String  endCursor: String }
IssueCommentEdge { cursor: String  node: IssueComment }
AddPullRequestReviewThreadReplyPayload { clientMutationId: String  comment: PullRequestReviewComment }
ResolveReviewThreadPayload { clientMutationId: String  thread: PullRequestReviewThread }
UnresolveReviewThreadPayload { clientMutationId: String  thread: PullRequestReviewThread }
AddCommentPayload { clientMutationId: String  commentEdge: IssueCommentEdge  subject: Node }
"""
_CONNECTION_NODES = {
    "ReactingUserConnection": "User",
    "UserConnection": "User",
    "OrganizationConnection": "Organization",
}
_IMPLEMENTS: dict[str, set[str]] = {
    "User": {"Node", "Actor", "RepositoryOwner"},
    "Bot": {"Node", "Actor"},
    "Organization": {"Node", "Actor", "RepositoryOwner"},
    "Repository": {"Node"},
    "PullRequest": {"Node"},
    "PullRequestReviewThread": {"Node"},
    "PullRequestReviewComment": {"Node"},
    "PullRequestReview": {"Node"},
    "IssueComment": {"Node"},
    "Commit": {"Node"},
    "Ref": {"Node"},
    "Label": {"Node"},
}
_ABSTRACT = {"Node", "Actor", "RepositoryOwner"}
_PAGINATION_ARGS = {"first", "after", "last", "before"}


@dataclass(frozen=True)
class FieldSpec:
    type: str
    arguments: frozenset[str] = frozenset()


def _build_schema() -> dict[str, dict[str, FieldSpec]]:
    schema: dict[str, dict[str, FieldSpec]] = {}
    field_entry = re.compile(r"(\w+)(?:\(([\w ]*)\))?:\s*(\[?\w+\]?)")
    for type_name, body in re.findall(r"(\w+) \{([^}]*)\}", _SCHEMA_SOURCE):
        fields = schema.setdefault(type_name, {})
        for name, arguments, type_ref in field_entry.findall(body):
            args = frozenset(arguments.split())
            if type_ref.endswith("Connection"):
                args |= _PAGINATION_ARGS
                node = _CONNECTION_NODES.get(type_ref, type_ref.removesuffix("Connection"))
                schema[type_ref] = {
                    "nodes": FieldSpec(f"[{node}]"),
                    "edges": FieldSpec(f"[{node}Edge]"),
                    "pageInfo": FieldSpec("PageInfo"),
                    "totalCount": FieldSpec("Int"),
                }
                schema[f"{node}Edge"] = {"cursor": FieldSpec("String"), "node": FieldSpec(node)}
            fields[name] = FieldSpec(type_ref, args)
    return schema


SCHEMA = _build_schema()


def _named_type(type_ref: str) -> str:
    return type_ref.strip("[]!")


def _applies(condition: str | None, typename: str) -> bool:
    return condition is None or condition == typename or condition in _IMPLEMENTS.get(typename, set())


# --------------------------------------------------------------------------------------------------
# GraphQL: validation and execution
# --------------------------------------------------------------------------------------------------


@dataclass
class GraphQLContext:
    model: GitHubModel
    web: str
    variables: dict[str, Any]
    fragments: dict[str, tuple[str, list[Any]]]
    errors: list[JSON] = field(default_factory=list)


def _validate(document: Document, operation: Operation) -> list[GraphQLError]:
    problems: list[GraphQLError] = []
    label = f"{operation.kind} {operation.name}" if operation.name else operation.kind

    def used_variables(value: Any) -> Iterator[str]:
        if isinstance(value, Variable):
            yield value.name
        elif isinstance(value, list):
            for item in value:
                yield from used_variables(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from used_variables(item)

    def walk(type_name: str, selections: list[Any], path: list[str | int], seen: frozenset[str]) -> None:
        for selection in selections:
            if isinstance(selection, InlineFragment):
                condition = selection.type_condition or type_name
                if condition not in SCHEMA:
                    problems.append(
                        GraphQLError(
                            f"No such type {condition}, so it can't be a fragment condition",
                            location=selection.location,
                            path=[*path, f"... on {condition}"],
                        )
                    )
                    continue
                walk(condition, selection.selections, [*path, f"... on {condition}"], seen)
            elif isinstance(selection, FragmentSpread):
                if selection.name not in document.fragments or selection.name in seen:
                    problems.append(
                        GraphQLError(
                            f"Fragment {selection.name} was used, but not defined",
                            location=selection.location,
                        )
                    )
                    continue
                condition, inner = document.fragments[selection.name]
                walk(condition, inner, [*path, f"... {selection.name}"], seen | {selection.name})
            else:
                problems.extend(check_field(type_name, selection, path, seen))

    def check_field(
        type_name: str, node: FieldNode, path: list[str | int], seen: frozenset[str]
    ) -> list[GraphQLError]:
        here: list[str | int] = [*path, node.key]
        found: list[GraphQLError] = []
        for _, arguments in node.directives:
            for value in arguments.values():
                found.extend(undeclared(value, node))
        if node.name == "__typename":
            return found
        spec = SCHEMA.get(type_name, {}).get(node.name)
        if spec is None:
            return [
                GraphQLError(
                    f"Field '{node.name}' doesn't exist on type '{type_name}'",
                    location=node.location,
                    path=here,
                    extensions={"code": "undefinedField", "typeName": type_name, "fieldName": node.name},
                )
            ]
        for argument, value in node.arguments.items():
            if argument not in spec.arguments:
                found.append(
                    GraphQLError(
                        f"Field '{node.name}' doesn't accept argument '{argument}'",
                        location=node.location,
                        path=[*here, argument],
                        extensions={
                            "code": "argumentNotAccepted",
                            "name": node.name,
                            "argumentName": argument,
                        },
                    )
                )
            found.extend(undeclared(value, node))
        inner = _named_type(spec.type)
        if inner in SCHEMA and node.selections is None:
            found.append(
                GraphQLError(
                    f"Field must have selections (field '{node.name}' returns {inner} but has no selections. "
                    f"Did you mean '{node.name} {{ ... }}'?)",
                    location=node.location,
                    path=here,
                )
            )
        elif inner not in SCHEMA and node.selections is not None:
            found.append(
                GraphQLError(
                    f"Selections can't be made on scalars (field '{node.name}' returns {inner} "
                    "but has selections)",
                    location=node.location,
                    path=here,
                )
            )
        elif node.selections is not None:
            walk(inner, node.selections, here, seen)
        return found

    def undeclared(value: Any, node: FieldNode) -> list[GraphQLError]:
        user = operation.name or f"anonymous {operation.kind}"
        return [
            GraphQLError(
                f"Variable ${name} is used by {user} but not declared",
                location=node.location,
                path=[label],
                extensions={"code": "variableNotDefined", "variableName": name},
            )
            for name in used_variables(value)
            if name not in operation.variables
        ]

    root = "Mutation" if operation.kind == "mutation" else "Query"
    if operation.kind == "subscription":
        return [GraphQLError("Subscriptions are not supported", location=operation.location)]
    walk(root, operation.selections, [label], frozenset())
    return problems


_SCALAR_CHECKS: dict[str, Callable[[Any], bool]] = {
    "Int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "Float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "String": lambda v: isinstance(v, str),
    "Boolean": lambda v: isinstance(v, bool),
    "ID": lambda v: isinstance(v, (str, int)) and not isinstance(v, bool),
}


def _coerce_variables(operation: Operation, given: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, (type_ref, default, has_default) in operation.variables.items():
        present = name in given and given[name] is not None
        value = given.get(name, _argument_value(default, {}))
        if type_ref.startswith("[") and value is not None and not isinstance(value, list):
            value = [value]  # GraphQL's input coercion of one value to a list
        base = type_ref.rstrip("!")
        problem = None
        if type_ref.endswith("!") and not present and not has_default:
            problem = "Expected value to not be null"
        elif value is not None and base in _SCALAR_CHECKS and not _SCALAR_CHECKS[base](value):
            problem = f"Could not coerce value {json.dumps(value)} to {base}"
        if problem:
            raise GraphQLError(
                f"Variable ${name} of type {type_ref} was provided invalid value",
                location=operation.location,
                extensions={"value": value, "problems": [{"path": [], "explanation": problem}]},
            )
        values[name] = value
    return values


def _argument_value(value: Any, variables: Mapping[str, Any]) -> Any:
    if isinstance(value, Variable):
        return variables.get(value.name)
    if isinstance(value, EnumValue):
        return value.name
    if isinstance(value, list):
        return [_argument_value(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: _argument_value(item, variables) for key, item in value.items()}
    return value


def _included(directives: list[tuple[str, dict[str, Any]]], variables: Mapping[str, Any]) -> bool:
    for name, arguments in directives:
        condition = bool(_argument_value(arguments.get("if"), variables))
        if (name == "include" and not condition) or (name == "skip" and condition):
            return False
    return True


def _collect_fields(
    typename: str, selections: list[Any], ctx: GraphQLContext, into: dict[str, list[FieldNode]]
) -> dict[str, list[FieldNode]]:
    for selection in selections:
        if not _included(selection.directives, ctx.variables):
            continue
        if isinstance(selection, FieldNode):
            into.setdefault(selection.key, []).append(selection)
        elif isinstance(selection, InlineFragment):
            if _applies(selection.type_condition, typename):
                _collect_fields(typename, selection.selections, ctx, into)
        else:
            condition, inner = ctx.fragments[selection.name]
            if _applies(condition, typename):
                _collect_fields(typename, inner, ctx, into)
    return into


def _execute_object(
    declared: str, obj: Any, selections: list[Any], ctx: GraphQLContext, path: list[str | int]
) -> JSON:
    typename = getattr(obj, "typename", declared)
    result: JSON = {}
    for key, nodes in _collect_fields(typename, selections, ctx, {}).items():
        node = nodes[0]
        if node.name == "__typename":
            result[key] = typename
            continue
        spec = (
            SCHEMA[typename][node.name]
            if node.name in SCHEMA.get(typename, {})
            else SCHEMA[declared][node.name]
        )
        arguments = {name: _argument_value(value, ctx.variables) for name, value in node.arguments.items()}
        try:
            value = _resolve(typename, node.name, obj, arguments, ctx)
        except GraphQLError as error:
            error.path = [*path, key]
            error.location = error.location or node.location
            ctx.errors.append(error.to_json())
            result[key] = None
            continue
        merged = [selection for same in nodes for selection in (same.selections or [])]
        result[key] = _complete(spec.type, value, merged, ctx, [*path, key])
    return result


def _complete(
    type_ref: str, value: Any, selections: list[Any], ctx: GraphQLContext, path: list[str | int]
) -> Any:
    if value is None:
        return None
    base = type_ref.rstrip("!")
    if base.startswith("["):
        return [_complete(base[1:-1], item, selections, ctx, [*path, i]) for i, item in enumerate(value)]
    if base in SCHEMA:
        return _execute_object(base, value, selections, ctx, path)
    return value


def execute_graphql(model: GitHubModel, web: str, payload: Any) -> JSON:
    """The response to one GraphQL request body (``{"query", "variables", "operationName"}``)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
        return {"errors": [{"message": "A query attribute must be specified and must be a string."}]}
    try:
        document = parse_graphql(payload["query"])
        wanted = payload.get("operationName")
        candidates = [op for op in document.operations if wanted in (None, op.name)]
        if not document.operations:
            raise GraphQLError("No operations in query document")
        if len(candidates) != 1:
            raise GraphQLError(
                f'No operation named "{wanted}"' if wanted else "An operation name is required"
            )
        operation = candidates[0]
        problems = _validate(document, operation)
        if problems:
            return {"errors": [problem.to_json() for problem in problems]}
        variables = _coerce_variables(operation, payload.get("variables") or {})
    except GraphQLError as error:
        return {"errors": [error.to_json()]}
    ctx = GraphQLContext(model, web, variables, document.fragments)
    root = "Mutation" if operation.kind == "mutation" else "Query"
    data = _execute_object(root, None, operation.selections, ctx, [])
    return {"data": data, "errors": ctx.errors} if ctx.errors else {"data": data}


# --------------------------------------------------------------------------------------------------
# GraphQL: resolvers
# --------------------------------------------------------------------------------------------------


@dataclass
class Connection:
    nodes: list[Any]
    edges: list[JSON]
    page_info: JSON
    total_count: int


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _cursor_index(cursor: Any) -> int:
    try:
        text = base64.b64decode(str(cursor), validate=True).decode()
        if text.startswith("cursor:v2:"):
            return int(text.removeprefix("cursor:v2:"))
    except ValueError:
        pass
    raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.", type="INVALID_CURSOR_ARGUMENTS")


def paginate(items: Sequence[Any], arguments: Mapping[str, Any], connection: str) -> Connection:
    """GitHub's cursor pagination: ``first``/``after`` or ``last``/``before``, at most 100 a page."""
    first, last = arguments.get("first"), arguments.get("last")
    if first is None and last is None:
        raise GraphQLError(
            f"You must provide a `first` or `last` value to properly paginate the `{connection}` connection.",
            type="MISSING_PAGINATION_BOUNDARIES",
        )
    for name, limit in (("first", first), ("last", last)):
        if limit is not None and limit > 100:
            raise GraphQLError(
                f"Requesting {limit} records on the `{connection}` connection exceeds the `{name}` limit of "
                "100 records.",
                type="EXCESSIVE_PAGINATION",
            )
    start, end = 0, len(items)
    if arguments.get("after") is not None:
        start = _cursor_index(arguments["after"]) + 1
    if arguments.get("before") is not None:
        end = _cursor_index(arguments["before"])
    window = list(range(start, max(start, end)))
    if first is not None:
        window = window[:first]
    if last is not None:
        window = window[-last:] if last else []
    nodes = [items[i] for i in window]
    return Connection(
        nodes,
        [{"cursor": _cursor(i), "node": items[i]} for i in window],
        {
            "hasNextPage": bool(window) and window[-1] + 1 < end if first is not None else end < len(items),
            "hasPreviousPage": bool(window) and window[0] > start if last is not None else start > 0,
            "startCursor": _cursor(window[0]) if window else None,
            "endCursor": _cursor(window[-1]) if window else None,
        },
        len(items),
    )


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _url(ctx: GraphQLContext, obj: Any) -> str:
    if isinstance(obj, Actor):
        return f"{ctx.web}/{'apps/' if obj.kind == 'Bot' else ''}{obj.login}"
    if isinstance(obj, Repository):
        return f"{ctx.web}/{obj.name_with_owner}"
    if isinstance(obj, PullRequest):
        return f"{ctx.web}/{obj.repository.name_with_owner}/pull/{obj.number}"
    pr = obj.thread.pull_request if isinstance(obj, ReviewComment) else obj.pull_request
    return f"{_url(ctx, pr)}#{obj.anchor}"


def _not_found(message: str) -> GraphQLError:
    return GraphQLError(message, type="NOT_FOUND")


def _input(arguments: Mapping[str, Any], input_type: str, *required: str) -> JSON:
    given = arguments.get("input")
    if not isinstance(given, dict):
        raise GraphQLError(f"Argument 'input' on Field is required. Expected type {input_type}!")
    for name in required:
        if given.get(name) in (None, ""):
            raise GraphQLError(f"Argument '{name}' on InputObject '{input_type}' is required.")
    return given


def _node_of(ctx: GraphQLContext, node_id: Any, kind: type) -> Any:
    found = ctx.model.nodes.get(str(node_id))
    if not isinstance(found, kind):
        raise _not_found(f"Could not resolve to a node with the global id of '{node_id}'")
    return found


def _query_repository(_: Any, args: JSON, ctx: GraphQLContext) -> Repository:
    repo = ctx.model.repository(str(args.get("owner")), str(args.get("name")))
    if repo is None:
        raise _not_found(
            f"Could not resolve to a Repository with the name '{args.get('owner')}/{args.get('name')}'."
        )
    return repo


def _repository_pull_request(repo: Repository, args: JSON, _: GraphQLContext) -> PullRequest:
    pr = repo.pull_requests.get(int(args.get("number") or 0))
    if pr is None:
        raise _not_found(f"Could not resolve to a PullRequest with the number of {args.get('number')}.")
    return pr


def _repository_pull_requests(repo: Repository, args: JSON, _: GraphQLContext) -> Connection:
    prs = sorted(repo.pull_requests.values(), key=lambda pr: pr.number)
    states = args.get("states")
    if states:
        prs = [pr for pr in prs if pr.state in states]
    for argument, attribute in (("headRefName", "head_ref_name"), ("baseRefName", "base_ref_name")):
        if args.get(argument):
            prs = [pr for pr in prs if getattr(pr, attribute) == args[argument]]
    if (args.get("orderBy") or {}).get("direction") == "DESC":
        prs.reverse()
    return paginate(prs, args, "pullRequests")


def _reply_to_thread(_: Any, args: JSON, ctx: GraphQLContext) -> JSON:
    given = _input(args, "AddPullRequestReviewThreadReplyInput", "pullRequestReviewThreadId", "body")
    thread = _node_of(ctx, given["pullRequestReviewThreadId"], ReviewThread)
    return {
        "clientMutationId": given.get("clientMutationId"),
        "comment": thread.add_reply(str(given["body"])),
    }


def _set_resolved(resolved: bool) -> Callable[[Any, JSON, GraphQLContext], JSON]:
    def resolve(_: Any, args: JSON, ctx: GraphQLContext) -> JSON:
        name = "ResolveReviewThreadInput" if resolved else "UnresolveReviewThreadInput"
        given = _input(args, name, "threadId")
        thread = _node_of(ctx, given["threadId"], ReviewThread)
        thread.is_resolved, thread.resolved_by = resolved, ctx.model.viewer if resolved else None
        return {"clientMutationId": given.get("clientMutationId"), "thread": thread}

    return resolve


def _add_comment(_: Any, args: JSON, ctx: GraphQLContext) -> JSON:
    given = _input(args, "AddCommentInput", "subjectId", "body")
    pr = _node_of(ctx, given["subjectId"], PullRequest)
    comment = pr.add_comment(body=str(given["body"]))
    edge = {"cursor": _cursor(len(pr.comments) - 1), "node": comment}
    return {"clientMutationId": given.get("clientMutationId"), "commentEdge": edge, "subject": pr}


def _page_of(attribute: str, connection: str) -> Callable[[Any, JSON, GraphQLContext], Connection]:
    return lambda obj, args, _: paginate(getattr(obj, attribute), args, connection)


def _empty(connection: str) -> Callable[[Any, JSON, GraphQLContext], Connection]:
    return lambda _, args, __: paginate([], args, connection)


def _user(_: Any, args: JSON, ctx: GraphQLContext) -> Actor:
    found = ctx.model.actors.get(str(args.get("login")).lower())
    if found is None:
        raise _not_found(f"Could not resolve to a User with the login of '{args.get('login')}'.")
    return found


def _node(_: Any, args: JSON, ctx: GraphQLContext) -> Any:
    found = ctx.model.nodes.get(str(args.get("id")))
    if found is None:
        raise _not_found(f"Could not resolve to a node with the global id of '{args.get('id')}'")
    return found


_Resolver = Callable[[Any, JSON, GraphQLContext], Any]
_URL: _Resolver = lambda obj, _, ctx: _url(ctx, obj)  # noqa: E731
_COMMENT_COMMON: dict[str, _Resolver] = {
    "url": _URL,
    "authorAssociation": lambda obj, _, __: obj.author.association,
    "bodyText": lambda obj, _, __: obj.body,
    "updatedAt": lambda obj, _, __: obj.created_at,
    "includesCreatedEdit": lambda _, __, ___: False,
    "isMinimized": lambda _, __, ___: False,
    "viewerDidAuthor": lambda obj, _, ctx: obj.author is ctx.model.viewer,
    "reactionGroups": lambda _, __, ___: [],
}
_ACTOR: dict[str, _Resolver] = {
    "url": _URL,
    "resourcePath": lambda obj, _, __: f"/{obj.login}",
    "avatarUrl": lambda obj, _, __: f"https://avatars.fixloop.test/u/{obj.database_id}?v=4",
    "isSiteAdmin": lambda _, __, ___: False,
    "organizations": _empty("organizations"),
}
RESOLVERS: dict[str, dict[str, _Resolver]] = {
    "Query": {
        "viewer": lambda _, __, ctx: ctx.model.viewer,
        "repository": _query_repository,
        "node": _node,
        "nodes": lambda _, args, ctx: [ctx.model.nodes.get(str(i)) for i in args.get("ids") or []],
        "user": _user,
    },
    "Mutation": {
        "addPullRequestReviewThreadReply": _reply_to_thread,
        "resolveReviewThread": _set_resolved(True),
        "unresolveReviewThread": _set_resolved(False),
        "addComment": _add_comment,
    },
    "User": _ACTOR,
    "Bot": _ACTOR,
    "Organization": _ACTOR,
    "Repository": {
        "url": _URL,
        "nameWithOwner": lambda repo, _, __: repo.name_with_owner,
        "isPrivate": lambda _, __, ___: False,
        "isFork": lambda _, __, ___: False,
        "isArchived": lambda _, __, ___: False,
        "viewerPermission": lambda _, __, ___: "ADMIN",
        "defaultBranchRef": lambda repo, _, __: {
            "id": "",
            "name": repo.default_branch,
            "prefix": "refs/heads/",
        },
        "parent": lambda _, __, ___: None,
        "pullRequest": _repository_pull_request,
        "pullRequests": _repository_pull_requests,
    },
    "PullRequest": {
        "url": _URL,
        "closed": lambda pr, _, __: pr.state != "OPEN",
        "merged": lambda pr, _, __: pr.state == "MERGED",
        "updatedAt": lambda pr, _, __: pr.created_at,
        "isCrossRepository": lambda _, __, ___: False,
        "headRepositoryOwner": lambda pr, _, __: pr.repository.owner,
        "headRepository": lambda pr, _, __: pr.repository,
        "maintainerCanModify": lambda _, __, ___: False,
        "reviewDecision": lambda _, __, ___: None,
        "comments": _page_of("comments", "comments"),
        "reviews": lambda pr, args, _: paginate(
            [r for r in pr.reviews if not args.get("states") or r.state in args["states"]], args, "reviews"
        ),
        "reviewThreads": _page_of("threads", "reviewThreads"),
        "assignees": _empty("assignees"),
        "labels": _empty("labels"),
    },
    "PullRequestReviewThread": {
        "isCollapsed": lambda thread, _, __: thread.is_resolved,
        "startLine": lambda _, __, ___: None,
        "originalStartLine": lambda _, __, ___: None,
        "diffSide": lambda _, __, ___: "RIGHT",
        "viewerCanReply": lambda _, __, ___: True,
        "viewerCanResolve": lambda thread, _, __: not thread.is_resolved,
        "viewerCanUnresolve": lambda thread, _, __: thread.is_resolved,
        "repository": lambda thread, _, __: thread.pull_request.repository,
        "comments": lambda thread, args, _: paginate(
            thread.comments[args.get("skip") or 0 :], args, "comments"
        ),
    },
    "PullRequestReviewComment": {
        **_COMMENT_COMMON,
        "publishedAt": lambda comment, _, __: comment.created_at,
        "path": lambda comment, _, __: comment.thread.path,
        "line": lambda comment, _, __: comment.thread.line,
        "originalLine": lambda comment, _, __: comment.thread.original_line,
        "outdated": lambda comment, _, __: comment.thread.is_outdated,
        "diffHunk": lambda comment, _, __: f"@@ -1,1 +1,1 @@ {comment.thread.path}",
        "pullRequestReview": lambda comment, _, __: comment.review,
        "pullRequest": lambda comment, _, __: comment.thread.pull_request,
    },
    "PullRequestReview": {
        **_COMMENT_COMMON,
        "createdAt": lambda review, _, __: review.submitted_at,
        "commit": lambda review, _, __: {"id": "", "oid": review.pull_request.head_ref_oid},
        "comments": lambda review, args, _: paginate(
            [c for t in review.pull_request.threads for c in t.comments if c.review is review],
            args,
            "comments",
        ),
    },
    "IssueComment": {**_COMMENT_COMMON, "minimizedReason": lambda _, __, ___: None},
    "Commit": {"abbreviatedOid": lambda commit, _, __: commit["oid"][:7]},
}


def _resolve(typename: str, name: str, obj: Any, arguments: JSON, ctx: GraphQLContext) -> Any:
    resolver = RESOLVERS.get(typename, {}).get(name)
    if resolver is not None:
        return resolver(obj, arguments, ctx)
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, _snake(name))


# --------------------------------------------------------------------------------------------------
# REST
# --------------------------------------------------------------------------------------------------


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> Response:
        body = json.dumps(payload, separators=(",", ":")).encode()
        return cls(status, body, {"Content-Type": "application/json; charset=utf-8", **(headers or {})})

    @classmethod
    def error(cls, status: int, message: str, docs: str = "https://docs.github.com/rest") -> Response:
        return cls.json(status, {"message": message, "documentation_url": docs})


@dataclass
class RestRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    api: str  # https://HOST/api/v3
    web: str  # https://HOST
    match: re.Match[str]

    def arg(self, name: str, default: str = "") -> str:
        return self.query.get(name, [default])[0]


def _rest_user(actor: Actor, req: RestRequest, *, full: bool = False) -> JSON:
    login = actor.rest_login
    user: JSON = {
        "login": login,
        "id": actor.database_id,
        "node_id": actor.id,
        "avatar_url": f"https://avatars.fixloop.test/u/{actor.database_id}?v=4",
        "gravatar_id": "",
        "url": f"{req.api}/users/{login}",
        "html_url": f"{req.web}/{'apps/' if actor.kind == 'Bot' else ''}{actor.login}",
        "type": actor.kind,
        "site_admin": False,
    }
    if full:
        user |= {
            "name": actor.name,
            "company": None,
            "blog": "",
            "location": None,
            "email": None,
            "hireable": None,
            "bio": None,
            "twitter_username": None,
            "public_repos": 1,
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "created_at": _iso(START_TIME),
            "updated_at": _iso(START_TIME),
        }
    return user


def _rest_repository(repo: Repository, req: RestRequest) -> JSON:
    return {
        "id": repo.database_id,
        "node_id": repo.id,
        "name": repo.name,
        "full_name": repo.name_with_owner,
        "private": False,
        "owner": _rest_user(repo.owner, req),
        "html_url": f"{req.web}/{repo.name_with_owner}",
        "description": None,
        "fork": False,
        "url": f"{req.api}/repos/{repo.name_with_owner}",
        "clone_url": f"{req.web}/{repo.name_with_owner}.git",
        "default_branch": repo.default_branch,
        "visibility": "public",
        "archived": False,
        "permissions": {"admin": True, "maintain": True, "push": True, "triage": True, "pull": True},
    }


def _rest_run(run: WorkflowRun, req: RestRequest) -> JSON:
    repo = run.repository
    base = f"{req.api}/repos/{repo.name_with_owner}/actions/runs/{run.id}"
    pull_requests = []
    if req.arg("exclude_pull_requests") != "true":
        pull_requests = [
            {
                "url": f"{req.api}/repos/{repo.name_with_owner}/pulls/{pr.number}",
                "id": pr.database_id,
                "number": pr.number,
                "head": {"ref": pr.head_ref_name, "sha": pr.head_ref_oid},
                "base": {"ref": pr.base_ref_name, "sha": "0" * 40},
            }
            for pr in repo.pull_requests.values()
            if pr.head_ref_name == run.head_branch and pr.state == "OPEN"
        ]
    return {
        "id": run.id,
        "name": run.workflow.name,
        "node_id": run.node_id,
        "head_branch": run.head_branch,
        "head_sha": run.head_sha,
        "path": run.workflow.path,
        "display_title": run.display_title,
        "run_number": run.run_number,
        "event": run.event,
        "status": run.status,
        "conclusion": run.conclusion,
        "workflow_id": run.workflow.id,
        "url": base,
        "html_url": f"{req.web}/{repo.name_with_owner}/actions/runs/{run.id}",
        "pull_requests": pull_requests,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "actor": _rest_user(repo.model.viewer, req),
        "run_attempt": run.run_attempt,
        "run_started_at": run.created_at,
        "jobs_url": f"{base}/jobs",
        "logs_url": f"{base}/logs",
        "artifacts_url": f"{base}/artifacts",
        "cancel_url": f"{base}/cancel",
        "rerun_url": f"{base}/rerun",
        "workflow_url": f"{req.api}/repos/{repo.name_with_owner}/actions/workflows/{run.workflow.id}",
        "head_commit": {
            "id": run.head_sha,
            "tree_id": run.head_sha[::-1],
            "message": run.display_title,
            "timestamp": run.created_at,
            "author": {"name": "Octo Cat", "email": "octocat@fixloop.test"},
            "committer": {"name": "Octo Cat", "email": "octocat@fixloop.test"},
        },
        "repository": _rest_repository(repo, req),
        "head_repository": _rest_repository(repo, req),
    }


def _rest_job(job: Job, req: RestRequest) -> JSON:
    run = job.run
    assert run is not None
    repo = run.repository.name_with_owner
    return {
        "id": job.id,
        "run_id": run.id,
        "workflow_name": run.workflow.name,
        "head_branch": run.head_branch,
        "run_url": f"{req.api}/repos/{repo}/actions/runs/{run.id}",
        "run_attempt": run.run_attempt,
        "node_id": job.node_id,
        "head_sha": run.head_sha,
        "url": f"{req.api}/repos/{repo}/actions/jobs/{job.id}",
        "html_url": f"{req.web}/{repo}/actions/runs/{run.id}/job/{job.id}",
        "status": job.status,
        "conclusion": job.conclusion,
        "created_at": job.started_at,
        "started_at": job.started_at,
        "completed_at": job.completed_at if job.status == "completed" else None,
        "name": job.name,
        "steps": [
            {
                "name": step.name,
                "status": step.status,
                "conclusion": step.conclusion,
                "number": step.number,
                "started_at": step.started_at,
                "completed_at": step.completed_at,
            }
            for step in job.steps
        ],
        "check_run_url": f"{req.api}/repos/{repo}/check-runs/{job.id}",
        "labels": ["ubuntu-latest"],
        "runner_id": 1,
        "runner_name": "GitHub Actions 1",
        "runner_group_id": 1,
        "runner_group_name": "GitHub Actions",
    }


def _rest_workflow(workflow: Workflow, repo: Repository, req: RestRequest) -> JSON:
    return {
        "id": workflow.id,
        "node_id": workflow.node_id,
        "name": workflow.name,
        "path": workflow.path,
        "state": workflow.state,
        "created_at": _iso(START_TIME),
        "updated_at": _iso(START_TIME),
        "url": f"{req.api}/repos/{repo.name_with_owner}/actions/workflows/{workflow.id}",
        "html_url": f"{req.web}/{repo.name_with_owner}/blob/{repo.default_branch}/{workflow.path}",
        "badge_url": f"{req.web}/{repo.name_with_owner}/workflows/{workflow.name}/badge.svg",
    }


def _rest_issue_comment(comment: IssueComment, req: RestRequest) -> JSON:
    pr = comment.pull_request
    repo = pr.repository.name_with_owner
    return {
        "id": comment.database_id,
        "node_id": comment.id,
        "url": f"{req.api}/repos/{repo}/issues/comments/{comment.database_id}",
        "html_url": f"{req.web}/{repo}/pull/{pr.number}#{comment.anchor}",
        "issue_url": f"{req.api}/repos/{repo}/issues/{pr.number}",
        "body": comment.body,
        "user": _rest_user(comment.author, req),
        "created_at": comment.created_at,
        "updated_at": comment.created_at,
        "author_association": comment.author.association,
    }


def _shown_lines(patch: str) -> set[int]:
    """The new-side lines a unified diff's hunks show (added or context lines)."""
    shown: set[int] = set()
    line = None
    for text in patch.splitlines():
        hunk = re.match(r"@@ -\S+ \+(\d+)", text)
        if hunk:
            line = int(hunk[1])
        elif line is not None and not text.startswith(("-", "\\")):
            shown.add(line)
            line += 1
    return shown


def _page(items: Sequence[Any], req: RestRequest) -> tuple[Sequence[Any], dict[str, str]]:
    """One page of a REST list (``per_page`` default 30, at most 100) and its ``Link`` header."""
    try:
        per_page = min(max(int(req.arg("per_page", "30")), 1), 100)
        page = max(int(req.arg("page", "1")), 1)
    except ValueError:
        per_page, page = 30, 1
    last = max((len(items) + per_page - 1) // per_page, 1)
    links = []
    for rel, number in (("next", page + 1), ("last", last)):
        if page < last:
            query = {key: values[0] for key, values in req.query.items()} | {"page": str(number)}
            links.append(f'<{req.api}{req.path}?{urlencode(query)}>; rel="{rel}"')
    return items[(page - 1) * per_page : page * per_page], ({"Link": ", ".join(links)} if links else {})


def _log_lines(step: Step) -> str:
    """A step's log as GitHub stores it: every line prefixed with a timestamp."""
    moment = datetime.strptime(step.started_at, "%Y-%m-%dT%H:%M:%SZ")
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return "".join(f"{stamp}.{i % 10000000:07d}Z {line}\n" for i, line in enumerate(step.log.splitlines()))


def job_log(job: Job) -> str:
    return "".join(_log_lines(step) for step in job.steps)


def run_log_zip(run: WorkflowRun) -> bytes:
    """The run's logs archive: ``N_JOB.txt`` for each job and ``JOB/N_STEP.txt`` for each of its steps."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for index, job in enumerate(run.jobs):
            archive.writestr(f"{index}_{job.name}.txt", job_log(job))
            for step in job.steps:
                archive.writestr(f"{job.name}/{step.number}_{step.name}.txt", _log_lines(step))
    return buffer.getvalue()


# --------------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InjectedFailure:
    """A failure :meth:`FakeGitHub.fail_operation` planned for one request."""

    status: int
    message: str
    after_applying: bool


def graphql_operation(body: Any) -> str | None:
    """The operation name of a GraphQL request body (``operationName``, else the first named one)."""
    if not isinstance(body, dict) or not isinstance(body.get("query"), str):
        return None
    try:
        names = [op.name for op in parse_graphql(body["query"]).operations if op.name]
    except GraphQLError:
        return None
    given = body.get("operationName")
    return str(given) if given else (names[0] if names else None)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    host: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int
    authenticated: bool

    @property
    def operation(self) -> str | None:
        """The GraphQL operation's name (``query Name``/``mutation Name``), for GraphQL requests."""
        if not isinstance(self.body, dict) or not isinstance(self.body.get("query"), str):
            return None
        try:
            names = [op.name for op in parse_graphql(self.body["query"]).operations if op.name]
        except GraphQLError:
            return None
        return self.body.get("operationName") or (names[0] if names else None)


class FakeGitHub:
    """The server. ``start()``/``stop()`` or use as a context manager; seed :attr:`model` (or
    :attr:`repo`, the repository ``octo/demo`` made at start) before running ``gh`` with :attr:`env`."""

    def __init__(self, directory: Path, *, token: str = DEFAULT_TOKEN, viewer: str = VIEWER_LOGIN) -> None:
        self.directory = directory
        self.token = token
        self.model = GitHubModel(viewer)
        self.repo = self.model.add_repository(DEFAULT_OWNER, DEFAULT_REPO)
        self.requests: list[RecordedRequest] = []
        self.tunnels: list[str] = []
        self.errors: list[str] = []  # tracebacks of requests the server failed on (answered 500)
        self.connection_errors: list[str] = []  # broken sockets: a client hanging up, a refused certificate
        self._blob_secret = secrets.token_hex(16)
        self._failures: dict[str, dict[int, InjectedFailure]] = {}  # operation -> ordinal -> failure
        self._operation_counts: dict[str, int] = {}
        self._tampering: dict[str, dict[int, Callable[[Any], Any]]] = {}  # operation -> ordinal -> change
        self._tamper_counts: dict[str, int] = {}
        # Reviews published on pull requests (POST .../pulls/N/reviews): the files of each pull request
        # ({filename, status, patch}), reactions on review comments by database id, the checks and statuses
        # made, and switches for the failure paths: writes refused (a read-only token), check runs refused
        # (a token that is no app's), and rate limits (each REST write in turn answered 403 with that
        # retry-after, or let through for None).
        self.pull_files: dict[int, list[JSON]] = {}
        self.reactions: dict[int, list[JSON]] = {}
        self.check_runs: list[JSON] = []
        self.statuses: list[JSON] = []
        self.read_only = False
        self.check_runs_allowed = True
        self.rate_limited_writes: list[int | None] = []  # None: that write goes through
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.certificates: Certificates | None = None
        self._routes = self._rest_routes()

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.certificates = make_certificates(self.directory / "tls")
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(self.certificates.cert_file, self.certificates.key_file)
        self._server = _Server(("127.0.0.1", 0), _Handler, self, tls)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fake-github", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    # -- what tests use ----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The server's own address (TLS straight to it, for clients other than ``gh``)."""
        return f"https://127.0.0.1:{self.port}"

    @property
    def host(self) -> str:
        return GITHUB_HOST

    @property
    def web_url(self) -> str:
        """Where ``gh`` thinks GitHub is: the base of every html URL it prints."""
        return f"https://{GITHUB_HOST}"

    def remote_url(self, owner: str = DEFAULT_OWNER, name: str = DEFAULT_REPO) -> str:
        return f"{self.web_url}/{owner}/{name}.git"

    def _base_env(self, host: str) -> dict[str, str]:
        assert self.certificates is not None, "start the server first"
        home = self.directory / "home"
        for sub in ("gh-config", "tmp", "cache", "state", "data"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("GH_", "GITHUB_", "GIT_"))
            and key.lower() not in {"https_proxy", "http_proxy", "all_proxy", "no_proxy"}
        }
        env.update(
            {
                "GH_HOST": host,
                "GH_ENTERPRISE_TOKEN": self.token,
                "SSL_CERT_FILE": str(self.certificates.ca_file),
                "GH_CONFIG_DIR": str(home / "gh-config"),
                "GH_NO_UPDATE_NOTIFIER": "1",
                "GH_PROMPT_DISABLED": "1",
                "GH_PAGER": "cat",
                "NO_COLOR": "1",
                "CLICOLOR": "0",
                "TMPDIR": str(home / "tmp"),  # gh caches run logs under TMPDIR/gh-cli-cache
                "XDG_CACHE_HOME": str(home / "cache"),
                "XDG_STATE_HOME": str(home / "state"),
                "XDG_DATA_HOME": str(home / "data"),
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_TERMINAL_PROMPT": "0",
                "NO_PROXY": "",
                "no_proxy": "",
            }
        )
        return env

    @property
    def env(self) -> dict[str, str]:
        """A whole environment for ``gh``: host :data:`GITHUB_HOST` reached through this server as HTTPS
        proxy, its token, the test CA, a fresh config directory, no prompts, colours or update checks."""
        proxy = f"http://127.0.0.1:{self.port}"
        return self._base_env(GITHUB_HOST) | {"HTTPS_PROXY": proxy, "https_proxy": proxy}

    @property
    def direct_env(self) -> dict[str, str]:
        """Like :attr:`env` with ``GH_HOST=127.0.0.1:PORT`` and no proxy. ``gh`` then cannot match a git
        remote to the host (it drops the remote URL's port): pass ``-R`` or ``GH_REPO=127.0.0.1:PORT/o/r``."""
        return self._base_env(f"127.0.0.1:{self.port}")

    def ssl_context(self) -> ssl.SSLContext:
        assert self.certificates is not None, "start the server first"
        return ssl.create_default_context(cafile=str(self.certificates.ca_file))

    def requests_to(self, path: str, method: str | None = None) -> list[RecordedRequest]:
        return [r for r in list(self.requests) if r.path == path and method in (None, r.method)]

    def graphql_requests(self) -> list[RecordedRequest]:
        return self.requests_to("/api/graphql", "POST")

    def fail_operation(
        self,
        operation: str,
        *,
        nth: int,
        status: int = 502,
        message: str = "Server Error",
        after_applying: bool = False,
    ) -> None:
        """Answer the ``nth`` GraphQL request named ``operation`` (counted from now on, from 1) with HTTP
        ``status`` once. ``after_applying``: the request takes effect first and only its answer is lost (as
        when a connection drops after GitHub made the change)."""
        base = self._operation_counts.get(operation, 0)
        failure = InjectedFailure(status, message, after_applying)
        self._failures.setdefault(operation, {})[base + nth] = failure

    def tamper_operation(self, operation: str, change: Callable[[Any], Any], *, nth: int = 1) -> None:
        """Answer the ``nth`` GraphQL request named ``operation`` (counted from now on, from 1) with
        ``change(answer)`` instead of the real answer (a JSON document: ``change`` may edit it in place and
        return it, or return anything else), as a broken proxy or server would."""
        base = self._tamper_counts.get(operation, 0)
        self._tampering.setdefault(operation, {})[base + nth] = change

    def _tampered(self, path: str, body: Any, response: Response) -> Response:
        if path != "/api/graphql" or not self._tampering or response.status != 200:
            return response
        operation = graphql_operation(body)
        if operation is None or operation not in self._tampering:
            return response
        count = self._tamper_counts[operation] = self._tamper_counts.get(operation, 0) + 1
        change = self._tampering[operation].pop(count, None)
        if change is None:
            return response
        return Response.json(200, change(json.loads(response.body)), response.headers)

    def _injected_failure(self, path: str, body: Any) -> InjectedFailure | None:
        if path != "/api/graphql" or not self._failures:
            return None
        operation = graphql_operation(body)
        if operation is None or operation not in self._failures:
            return None
        count = self._operation_counts[operation] = self._operation_counts.get(operation, 0) + 1
        return self._failures[operation].pop(count, None)

    # -- handling ----------------------------------------------------------------------------------

    def handle(self, method: str, host: str, target: str, headers: Mapping[str, str], raw: bytes) -> Response:
        split = urlsplit(target)
        path, query = split.path, parse_qs(split.query, keep_blank_values=True)
        try:
            body: Any = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
        scheme, _, given = authorization.partition(" ")
        authenticated = scheme.lower() in ("token", "bearer") and given.strip() == self.token
        try:
            with self.model.lock:
                failure = self._injected_failure(path, body) if authenticated else None
                if failure is None or failure.after_applying:
                    response = self._respond(method, host, path, query, body, authorization, authenticated)
                    if authenticated:
                        response = self._tampered(path, body, response)
                if failure is not None:
                    response = Response.error(failure.status, failure.message)
        except Exception:
            self.errors.append(traceback.format_exc())
            response = Response.error(500, "Server Error")
        kept = {k: v for k, v in headers.items() if k.lower() not in ("authorization", "proxy-authorization")}
        self.requests.append(
            RecordedRequest(method, host, path, query, kept, body, response.status, authenticated)
        )
        return response

    def _respond(
        self,
        method: str,
        host: str,
        path: str,
        query: dict[str, list[str]],
        body: Any,
        authorization: str,
        authenticated: bool,
    ) -> Response:
        if host.split(":")[0] == BLOB_HOST or path.startswith("/_blobs/"):
            return self._blob(path.removeprefix("/_blobs"), query)
        web, api = f"https://{host}", f"https://{host}/api/v3"
        graphql = path == "/api/graphql"
        if not authenticated:
            if authorization:
                return Response.error(401, "Bad credentials")
            if graphql:
                return Response.error(
                    401,
                    "This endpoint requires you to be authenticated.",
                    "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql",
                )
            return Response.error(401, "Requires authentication")
        common = {"X-OAuth-Scopes": TOKEN_SCOPES, "X-GitHub-Media-Type": "github.v3; format=json"}
        if graphql:
            if method != "POST":
                return Response.error(404, "Not Found")
            response = Response.json(200, execute_graphql(self.model, web, body))
        elif path == "/api/v3" or path.startswith("/api/v3/"):
            rest_path = path.removeprefix("/api/v3") or "/"
            response = self._rest(method, rest_path, query, body, api, web)
        else:
            response = Response.error(404, "Not Found")
        response.headers = {**common, **response.headers}
        return response

    def _rest(
        self, method: str, path: str, query: dict[str, list[str]], body: Any, api: str, web: str
    ) -> Response:
        wait = self.rate_limited_writes.pop(0) if method != "GET" and self.rate_limited_writes else None
        if wait is not None:
            headers = {"Retry-After": str(wait), "X-RateLimit-Remaining": "0"}
            return Response.json(403, {"message": "You have exceeded a secondary rate limit."}, headers)
        if method != "GET" and self.read_only:
            return Response.error(403, "Resource not accessible by integration")
        for route_method, pattern, handler in self._routes:
            match = pattern.fullmatch(path)
            if match and route_method == method:
                return handler(RestRequest(method, path, query, body, api, web, match))
        return Response.error(404, "Not Found")

    def _rest_routes(self) -> list[tuple[str, re.Pattern[str], Callable[[RestRequest], Response]]]:
        repo = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
        table: list[tuple[str, str, Callable[[RestRequest], Response]]] = [
            ("GET", r"/", self._root),
            ("GET", r"/meta", lambda req: Response.json(200, {"verifiable_password_authentication": True})),
            ("GET", r"/user", lambda req: Response.json(200, _rest_user(self.model.viewer, req, full=True))),
            ("GET", r"/users/(?P<login>[^/]+)", self._get_user),
            ("GET", repo, self._get_repository),
            ("GET", repo + r"/issues/(?P<number>\d+)/comments", self._list_issue_comments),
            ("POST", repo + r"/issues/(?P<number>\d+)/comments", self._create_issue_comment),
            ("GET", repo + r"/pulls/(?P<number>\d+)/files", self._list_pull_files),
            ("POST", repo + r"/pulls/(?P<number>\d+)/reviews", self._create_review),
            ("PATCH", repo + r"/issues/comments/(?P<id>\d+)", self._update_issue_comment),
            ("GET", repo + r"/pulls/comments/(?P<id>\d+)/reactions", self._list_reactions),
            ("POST", repo + r"/check-runs", self._create_check_run),
            ("POST", repo + r"/statuses/(?P<sha>[0-9a-f]{40})", self._create_status),
            ("GET", repo + r"/actions/workflows", self._list_workflows),
            ("GET", repo + r"/actions/workflows/(?P<id>[^/]+)", self._get_workflow),
            ("GET", repo + r"/actions/runs", self._list_runs),
            ("GET", repo + r"/actions/runs/(?P<id>\d+)", self._get_run),
            ("GET", repo + r"/actions/runs/(?P<id>\d+)/jobs", self._list_jobs),
            ("GET", repo + r"/actions/runs/(?P<id>\d+)/logs", self._run_logs),
            ("GET", repo + r"/actions/jobs/(?P<id>\d+)", self._get_job),
            ("GET", repo + r"/actions/jobs/(?P<id>\d+)/logs", self._job_logs),
        ]
        return [(method, re.compile(pattern), handler) for method, pattern, handler in table]

    def _root(self, req: RestRequest) -> Response:
        return Response.json(
            200,
            {
                "current_user_url": f"{req.api}/user",
                "repository_url": f"{req.api}/repos/{{owner}}/{{repo}}",
                "user_url": f"{req.api}/users/{{user}}",
            },
        )

    def _get_user(self, req: RestRequest) -> Response:
        actor = self.model.actors.get(req.match["login"].lower())
        return (
            Response.json(200, _rest_user(actor, req, full=True))
            if actor
            else Response.error(404, "Not Found")
        )

    def _repository(self, req: RestRequest) -> Repository | None:
        return self.model.repository(req.match["owner"], req.match["name"])

    def _get_repository(self, req: RestRequest) -> Response:
        repo = self._repository(req)
        return Response.json(200, _rest_repository(repo, req)) if repo else Response.error(404, "Not Found")

    def _pull_request(self, req: RestRequest) -> PullRequest | None:
        repo = self._repository(req)
        return repo.pull_requests.get(int(req.match["number"])) if repo else None

    def _list_issue_comments(self, req: RestRequest) -> Response:
        pr = self._pull_request(req)
        if pr is None:
            return Response.error(404, "Not Found")
        page, headers = _page(pr.comments, req)
        return Response.json(200, [_rest_issue_comment(c, req) for c in page], headers)

    def _create_issue_comment(self, req: RestRequest) -> Response:
        pr = self._pull_request(req)
        if pr is None:
            return Response.error(404, "Not Found")
        body = req.body.get("body") if isinstance(req.body, dict) else None
        if not isinstance(body, str) or not body:
            return Response.json(
                422,
                {
                    "message": "Validation Failed",
                    "errors": [{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
                    "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
                },
            )
        return Response.json(201, _rest_issue_comment(pr.add_comment(body=body), req))

    def _list_pull_files(self, req: RestRequest) -> Response:
        pr = self._pull_request(req)
        if pr is None:
            return Response.error(404, "Not Found")
        page, headers = _page(self.pull_files.get(pr.number, []), req)
        return Response.json(200, list(page), headers)

    def _create_review(self, req: RestRequest) -> Response:
        """A submitted review whose comments each open a thread, refused whole (422) when one comment is on
        a line the pull request's diff does not show, as on GitHub."""
        pr = self._pull_request(req)
        if pr is None:
            return Response.error(404, "Not Found")
        body = req.body if isinstance(req.body, dict) else {}
        comments = body.get("comments") or []
        shown = {
            f["filename"]: _shown_lines(f.get("patch") or "") for f in self.pull_files.get(pr.number, [])
        }
        for item in comments:
            first = item.get("start_line") or item.get("line")
            if not all(line in shown.get(item.get("path"), set()) for line in range(first, item["line"] + 1)):
                return Response.json(
                    422,
                    {
                        "message": "Unprocessable Entity",
                        "errors": ["Line could not be resolved"],
                        "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
                    },
                )
        model = self.model
        review = pr.add_review(author=model.viewer.login, body=str(body.get("body") or ""), state="COMMENTED")
        for item in comments:
            thread = pr.add_thread(
                path=item["path"],
                line=item["line"],
                body=item["body"],
                author=model.viewer.login,
                review=review,
            )
            thread.original_line = item["line"]
        repo = pr.repository.name_with_owner
        return Response.json(
            200,
            {
                "id": review.database_id,
                "node_id": review.id,
                "state": "COMMENTED",
                "body": review.body,
                "user": _rest_user(review.author, req),
                "html_url": f"{req.web}/{repo}/pull/{pr.number}#{review.anchor}",
                "commit_id": body.get("commit_id"),
            },
        )

    def _update_issue_comment(self, req: RestRequest) -> Response:
        repo = self._repository(req)
        for pr in repo.pull_requests.values() if repo else []:
            for comment in pr.comments:
                if str(comment.database_id) == req.match["id"]:
                    if comment.author is not self.model.viewer:
                        return Response.error(403, "Resource not accessible by integration")
                    comment.body = str((req.body or {}).get("body") or "")
                    return Response.json(200, _rest_issue_comment(comment, req))
        return Response.error(404, "Not Found")

    def _list_reactions(self, req: RestRequest) -> Response:
        page, headers = _page(self.reactions.get(int(req.match["id"]), []), req)
        return Response.json(200, list(page), headers)

    def _create_check_run(self, req: RestRequest) -> Response:
        if not self.check_runs_allowed:
            return Response.error(403, "You must authenticate via a GitHub App.")
        run = dict(req.body or {}) | {"id": self.model.database_id()}
        self.check_runs.append(run)
        return Response.json(201, run)

    def _create_status(self, req: RestRequest) -> Response:
        status = dict(req.body or {}) | {"sha": req.match["sha"], "id": self.model.database_id()}
        self.statuses.append(status)
        return Response.json(201, status)

    def _list_workflows(self, req: RestRequest) -> Response:
        repo = self._repository(req)
        if repo is None:
            return Response.error(404, "Not Found")
        page, headers = _page(list(repo.workflows.values()), req)
        workflows = [_rest_workflow(w, repo, req) for w in page]
        return Response.json(200, {"total_count": len(repo.workflows), "workflows": workflows}, headers)

    def _get_workflow(self, req: RestRequest) -> Response:
        repo = self._repository(req)
        if repo is None:
            return Response.error(404, "Not Found")
        for workflow in repo.workflows.values():
            if req.match["id"] in (str(workflow.id), workflow.path.rsplit("/", 1)[-1]):
                return Response.json(200, _rest_workflow(workflow, repo, req))
        return Response.error(404, "Not Found")

    def _run(self, req: RestRequest) -> WorkflowRun | None:
        repo = self._repository(req)
        return repo.runs.get(int(req.match["id"])) if repo else None

    def _list_runs(self, req: RestRequest) -> Response:
        repo = self._repository(req)
        if repo is None:
            return Response.error(404, "Not Found")
        runs = sorted(repo.runs.values(), key=lambda run: run.created_at, reverse=True)
        for argument, attribute in (("branch", "head_branch"), ("head_sha", "head_sha"), ("event", "event")):
            if req.arg(argument):
                runs = [r for r in runs if getattr(r, attribute) == req.arg(argument)]
        if req.arg("status"):  # a status or a conclusion
            runs = [r for r in runs if req.arg("status") in (r.status, r.conclusion)]
        page, headers = _page(runs, req)
        payload = {"total_count": len(runs), "workflow_runs": [_rest_run(r, req) for r in page]}
        return Response.json(200, payload, headers)

    def _get_run(self, req: RestRequest) -> Response:
        run = self._run(req)
        return Response.json(200, _rest_run(run, req)) if run else Response.error(404, "Not Found")

    def _list_jobs(self, req: RestRequest) -> Response:
        run = self._run(req)
        if run is None:
            return Response.error(404, "Not Found")
        page, headers = _page(run.jobs, req)
        return Response.json(
            200, {"total_count": len(run.jobs), "jobs": [_rest_job(j, req) for j in page]}, headers
        )

    def _job(self, req: RestRequest) -> Job | None:
        repo = self._repository(req)
        for run in repo.runs.values() if repo else []:
            for job in run.jobs:
                if str(job.id) == req.match["id"]:
                    return job
        return None

    def _get_job(self, req: RestRequest) -> Response:
        job = self._job(req)
        return Response.json(200, _rest_job(job, req)) if job else Response.error(404, "Not Found")

    def _blob_location(self, req: RestRequest, name: str) -> str:
        """Logs are a redirect to blob storage on another host (so the token is not sent there), as on
        GitHub; straight to 127.0.0.1 they stay on this host under /_blobs."""
        host = req.web.removeprefix("https://")
        base = f"https://{BLOB_HOST}" if host == GITHUB_HOST else f"{req.web}/_blobs"
        return f"{base}/{name}?sig={self._blob_secret}"

    def _run_logs(self, req: RestRequest) -> Response:
        run = self._run(req)
        if run is None:
            return Response.error(404, "Not Found")
        if run.status != "completed":
            return Response.error(404, "Not Found")
        location = self._blob_location(req, f"runs/{run.repository.database_id}/{run.id}/logs.zip")
        return Response(302, b"", {"Location": location})

    def _job_logs(self, req: RestRequest) -> Response:
        job = self._job(req)
        if job is None or job.run is None:
            return Response.error(404, "Not Found")
        location = self._blob_location(req, f"jobs/{job.run.repository.database_id}/{job.id}/log.txt")
        return Response(302, b"", {"Location": location})

    def _blob(self, path: str, query: dict[str, list[str]]) -> Response:
        if query.get("sig", [""])[0] != self._blob_secret:
            return Response(403, b"AuthenticationFailed", {"Content-Type": "text/plain"})
        match = re.fullmatch(r"/(runs|jobs)/(\d+)/(\d+)/(logs\.zip|log\.txt)", path)
        if match:
            for repo in self.model.repositories.values():
                if str(repo.database_id) != match[2]:
                    continue
                if match[1] == "runs" and int(match[3]) in repo.runs:
                    return Response(
                        200, run_log_zip(repo.runs[int(match[3])]), {"Content-Type": "application/zip"}
                    )
                for run in repo.runs.values():
                    for job in run.jobs:
                        if match[1] == "jobs" and job.id == int(match[3]):
                            return Response(200, job_log(job).encode(), {"Content-Type": "text/plain"})
        return Response(404, b"BlobNotFound", {"Content-Type": "text/plain"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], app: FakeGitHub, tls: ssl.SSLContext
    ):
        self.app, self.tls = app, tls
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        self.app.connection_errors.append(traceback.format_exc())


class _SocketWriter(io.BufferedIOBase):
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._sock.sendall(data)
        return len(memoryview(data))


class _Handler(BaseHTTPRequestHandler):
    """TLS at once when the client starts with it (direct), else plain HTTP for ``CONNECT`` then TLS."""

    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 60

    def setup(self) -> None:
        super().setup()
        try:
            first = self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            first = b""
        if first == b"\x16":  # a TLS handshake record
            self._start_tls()

    def _start_tls(self) -> None:
        self.rfile.close()
        self.connection = self.server.tls.wrap_socket(self.connection, server_side=True)
        self.rfile = self.connection.makefile("rb", self.rbufsize)
        self.wfile = _SocketWriter(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_CONNECT(self) -> None:
        target = self.path
        self.server.app.tunnels.append(target)
        host, _, port = target.rpartition(":")
        if host not in (GITHUB_HOST, BLOB_HOST) or port != "443":
            self.send_response(403, "Forbidden")
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.close_connection = True
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        self._start_tls()
        self.close_connection = False

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _dispatch(self) -> None:
        if not isinstance(self.connection, ssl.SSLSocket):
            self.send_error(405, "this server speaks HTTPS or tunnels it with CONNECT")
            return
        raw = self._read_body()
        headers = dict(self.headers.items())
        response = self.server.app.handle(self.command, self.headers.get("Host", ""), self.path, headers, raw)
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("X-GitHub-Request-Id", secrets.token_hex(8).upper())
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _dispatch


# --------------------------------------------------------------------------------------------------
# A git checkout gh recognises
# --------------------------------------------------------------------------------------------------


def make_git_repo(
    path: Path,
    github: FakeGitHub,
    *,
    owner: str = DEFAULT_OWNER,
    name: str = DEFAULT_REPO,
    branch: str = "main",
) -> Path:
    """A git repository at ``path`` with one commit on ``branch`` and ``origin`` at the fake host's
    ``https://HOST/OWNER/NAME.git``, so ``gh`` run inside it resolves ``OWNER/NAME`` from the remote."""
    path.mkdir(parents=True, exist_ok=True)
    env = github.env | {
        "GIT_AUTHOR_NAME": "Octo Cat",
        "GIT_AUTHOR_EMAIL": "octocat@fixloop.test",
        "GIT_COMMITTER_NAME": "Octo Cat",
        "GIT_COMMITTER_EMAIL": "octocat@fixloop.test",
    }
    for command in (
        ["git", "init", "-q", "-b", branch],
        ["git", "remote", "add", "origin", github.remote_url(owner, name)],
        ["git", "commit", "-q", "--allow-empty", "-m", "Initial commit"],
    ):
        subprocess.run(command, cwd=path, env=env, check=True, capture_output=True)
    return path
