"""GitHub's REST API through `gh api --include`: the status and headers read by fixloop, a JSON body on
standard input (never in an argument), the answer's JSON checked by the caller.

Failures are FixloopError codes a user can act on: GH_AUTH_REQUIRED (401), GITHUB_NO_WRITE_PERMISSION (403
that is no rate limit: a token without `pull-requests: write` or `checks: write`), GITHUB_RATE_LIMITED (a
rate limit, with GitHub's retry-after in seconds; waited for once when it is at most MAX_WAIT_SECONDS),
the caller's code for 404, GITHUB_VALIDATION_FAILED (422, with GitHub's messages), GITHUB_API_ERROR else.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.redact import redact
from fixloop.github.gh import Gh

MAX_WAIT_SECONDS = 5
MAX_PAGES = 50
PAGE_SIZE = 100
MAX_MESSAGE_CHARS = 500


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def message(self) -> str:
        """GitHub's message of a failed request, with the messages of its `errors` list, secrets masked."""
        body = self.body if isinstance(self.body, dict) else {}
        parts = [str(body.get("message") or f"HTTP {self.status}")]
        for item in body.get("errors") or []:
            if isinstance(item, dict) and item.get("message"):
                parts.append(str(item["message"]))
            elif isinstance(item, str):
                parts.append(item)
        return redact("; ".join(parts))[:MAX_MESSAGE_CHARS]


def parse_included(stdout: str) -> Answer | None:
    """The answer `gh api --include` printed: status line, headers, a blank line, the body (None when the
    output holds no HTTP status line: gh failed before it had an answer)."""
    head, _, rest = stdout.replace("\r\n", "\n").partition("\n\n")
    lines = head.split("\n")
    first = lines[0].split()
    if len(first) < 2 or not first[0].startswith("HTTP/") or not first[1].isdigit():
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    try:
        body = json.loads(rest) if rest.strip() else None
    except ValueError:
        body = rest
    return Answer(int(first[1]), headers, body)


def retry_after_seconds(answer: Answer, now: float) -> int | None:
    """Seconds GitHub asks to wait when `answer` is a rate limit, else None."""
    if answer.status not in (403, 429):
        return None
    given = answer.header("retry-after")
    if given is not None and given.strip().isdigit():
        return int(given.strip())
    if answer.header("x-ratelimit-remaining") == "0":
        reset = answer.header("x-ratelimit-reset") or ""
        return max(int(reset) - int(now), 0) if reset.isdigit() else 60
    if answer.status == 429 or "rate limit" in answer.message().lower():
        return 60
    return None


class Rest:
    """REST requests on one host (gh's default host when None)."""

    def __init__(
        self,
        gh: Gh,
        host: str | None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.gh = gh
        self.host = host
        self.sleep = sleep
        self.clock = clock
        self.writes = 0

    def call(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        *,
        not_found: str = "GITHUB_NOT_FOUND",
    ) -> Any:
        """The JSON GitHub answered to `method path`; FixloopError as the module says."""
        answer = self._send(method, path, body)
        wait = retry_after_seconds(answer, self.clock())
        if wait is not None and wait <= MAX_WAIT_SECONDS:
            self.sleep(float(wait))
            answer = self._send(method, path, body)
            wait = retry_after_seconds(answer, self.clock())
        if 200 <= answer.status < 300:
            return answer.body
        raise self._failure(method, path, answer, wait, not_found)

    def pages(self, path: str, *, not_found: str = "GITHUB_NOT_FOUND") -> list[Any]:
        """Every item of a REST list, PAGE_SIZE a page."""
        items: list[Any] = []
        joiner = "&" if "?" in path else "?"
        for page in range(1, MAX_PAGES + 1):
            got = self.call("GET", f"{path}{joiner}per_page={PAGE_SIZE}&page={page}", not_found=not_found)
            if not isinstance(got, list):
                raise FixloopError("GITHUB_BAD_RESPONSE", f"GitHub answered {path} with no list.", path="$")
            items += got
            if len(got) < PAGE_SIZE:
                return items
        raise FixloopError(
            "GITHUB_TOO_MANY_PAGES", f"More than {MAX_PAGES} pages of {path}: stopped reading."
        )

    def _send(self, method: str, path: str, body: Mapping[str, Any] | None) -> Answer:
        args = ["api", "--include", "--method", method, path, "-H", "Accept: application/vnd.github+json"]
        if self.host:
            args += ["--hostname", self.host]
        if body is not None:
            args += ["--input", "-"]
        if method != "GET":
            self.writes += 1
        result = self.gh.run(*args, input_text=json.dumps(dict(body)) if body is not None else None)
        answer = parse_included(result.stdout)
        if answer is None:
            raise FixloopError(
                "GH_COMMAND_FAILED",
                f"`gh api {path}` failed: {result.error_text() or 'no answer'}",
                exit_status=result.returncode,
            )
        return answer

    def _failure(
        self, method: str, path: str, answer: Answer, wait: int | None, not_found: str
    ) -> FixloopError:
        said = answer.message()
        where = f"{method} {path.split('?')[0]}"
        if answer.status == 401:
            return FixloopError(
                "GH_AUTH_REQUIRED",
                f"GitHub refused gh's credentials ({where}): run `gh auth login` or set GH_TOKEN. "
                f"GitHub says: {said}",
                suggestion="gh auth login",
            )
        if wait is not None:
            return FixloopError(
                "GITHUB_RATE_LIMITED",
                f"GitHub's rate limit stopped {where}: try again in {wait}s. GitHub says: {said}",
                retry_after_seconds=wait,
            )
        if answer.status == 403:
            return FixloopError(
                "GITHUB_NO_WRITE_PERMISSION" if method != "GET" else "GITHUB_FORBIDDEN",
                f"GitHub refused {where}: the token needs `pull-requests: write` and `checks: write` "
                f"(or a user with write access). GitHub says: {said}",
                status=403,
            )
        if answer.status == 404:
            return FixloopError(
                not_found, f"GitHub found nothing at {where}. GitHub says: {said}", status=404
            )
        if answer.status == 422:
            return FixloopError("GITHUB_VALIDATION_FAILED", f"GitHub refused {where}: {said}", status=422)
        return FixloopError(
            "GITHUB_API_ERROR", f"{where} failed with HTTP {answer.status}: {said}", status=answer.status
        )
