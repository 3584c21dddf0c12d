"""One CI log line -> its text as a person reads it, plus what it says about jobs and steps.

GitHub Actions (`gh run view --log-failed`: `JOB<TAB>STEP<TAB>2024-01-02T03:04:05.1234567Z message`, or
a raw log with `##[group]Run ...` step headers), GitLab (`section_start:TIME:NAME` markers, `ERROR: Job
failed`),
Jenkins (`[Pipeline] { (Stage)`, `ERROR: script returned exit code 1`), CircleCI, Buildkite and Travis logs
all reduce to the same thing: text without colours, progress rewrites, timestamps or folding markers.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from fixloop.failures.textutil import strip_ansi


class CiLine(NamedTuple):
    text: str | None  # None: a marker line with nothing to read
    job: str | None = None  # GitHub's job column
    step: str | None = None  # GitHub's step column
    starts_step: str | None = None  # a raw log's step header: the step it opens
    step_failed: bool = False  # GitHub's ##[error]
    job_failed: bool = False  # a runner's closing failure line (GitLab, Jenkins, CircleCI, Buildkite, Travis)
    exit_code: int | None = None


_ISO = r"\ufeff?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
_GITHUB_TIME = re.compile(r"\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")
_TIMESTAMP = re.compile(
    r"^(?:"
    + _ISO
    + r"(?: \d\d[OE]\+?)?|\["
    + _ISO
    + r"\]|\[\d\d:\d\d:\d\d(?:\.\d+)?\]|\d\d:\d\d:\d\d(?:\.\d+)? ) ?"
)
_TIMESTAMP_STARTS = frozenset("0123456789[\ufeff")
_GITLAB_SECTION = re.compile(r"section_(start|end):\d+:([^\r\s\[]+)(?:\[[^\]]*\])?\r?(?:\x1b\[0K)?")
_EXIT_CODE = re.compile(r"exit code (\d+)")
_JOB_FAILED = re.compile(
    r"^(?:ERROR: Job failed: exit code (\d+)"
    r"|ERROR: script returned exit code (\d+)"
    r"|Finished: FAILURE"
    r"|Exited with code (?:exit status )?(\d+)"
    r"|🚨 Error: The command exited with status (\d+)"
    r'|The command ".*" exited with (\d+)\.)'
)
_JENKINS_STAGE = re.compile(r"^\[Pipeline\] \{ \((.+)\)\s*$")
_BUILDKITE_HEADER = re.compile(r"^(?:\+\+\+|~~~) (.+)$")
_KEPT_COMMANDS = ("##[warning]", "##[notice]", "##[debug]", "##[command]", "##[section]")


class LineCleaner:
    """Cleans a log's lines one by one. It remembers the last GitHub `JOB<TAB>STEP<TAB>` prefix: the
    lines of a step share it, and recognising it again costs no splitting."""

    def __init__(self, max_chars: int = 2000) -> None:
        self.max_chars = max_chars
        self._prefix = "\x00"  # no line starts with it
        self._job: str | None = None
        self._step: str | None = None

    def clean(self, raw: str) -> CiLine:
        """Clean one line of a CI log (its newline may be there)."""
        end = len(raw) - (raw.endswith("\n") + raw.endswith("\r\n"))
        job = step = None
        offset = 0
        if "\t" in raw:
            if raw.startswith(self._prefix):
                stamp = _GITHUB_TIME.match(raw, len(self._prefix))
                if stamp:
                    job, step, offset = self._job, self._step, stamp.end()
            if job is None:
                parts = raw.split("\t", 2)
                stamp = _GITHUB_TIME.match(parts[2]) if len(parts) == 3 else None
                if stamp:
                    self._prefix, self._job, self._step = f"{parts[0]}\t{parts[1]}\t", parts[0], parts[1]
                    job, step, offset = parts[0], parts[1], len(self._prefix) + stamp.end()
        line = raw[offset:end] if offset or end < len(raw) else raw
        return _clean_message(line, job, step, self.max_chars)


def clean_ci_line(raw: str, max_chars: int = 2000) -> CiLine:
    """Clean one line of a CI log (its newline may be there)."""
    return LineCleaner(max_chars).clean(raw)


def _clean_message(line: str, job: str | None, step: str | None, max_chars: int) -> CiLine:
    starts_step = None
    if "section_" in line:
        for kind, name in _GITLAB_SECTION.findall(line):
            starts_step = name if kind == "start" else starts_step
        line = _GITLAB_SECTION.sub("", line)
    if "\r" in line:
        line = _last_state(line)
    text = strip_ansi(line)
    if text[:1] in _TIMESTAMP_STARTS and (stamp := _TIMESTAMP.match(text)):
        text = text[stamp.end() :]
    if len(text) > max_chars:
        text = text[:max_chars] + " [line cut]"
    if text.startswith(("##[", "::", "[Pipeline]")):
        return _command(text, job, step, starts_step)
    if text[:3] in ("+++", "~~~") and (header := _BUILDKITE_HEADER.match(text)):
        return CiLine(text, job, step, header.group(1))
    if text[:1] in ("E", "F", "T", "\U0001f6a8") and (failed := _JOB_FAILED.match(text)):
        code = next((int(group) for group in failed.groups() if group and len(group) < 10), None)
        return CiLine(text, job, step, starts_step, job_failed=True, exit_code=code)
    return CiLine(text, job, step, starts_step)


def _last_state(line: str) -> str:
    for part in reversed(line.split("\r")):
        if strip_ansi(part).strip():
            return part
    return ""


def _command(text: str, job: str | None, step: str | None, starts_step: str | None) -> CiLine:
    """GitHub's ##[...] and ::...:: commands and Jenkins' [Pipeline] lines."""
    if text.startswith("##[error]"):
        message = text[len("##[error]") :]
        code = _EXIT_CODE.search(message) if message.startswith("Process completed") else None
        exit_code = int(code.group(1)) if code and len(code.group(1)) < 10 else None
        return CiLine(message, job, step, starts_step, step_failed=True, exit_code=exit_code)
    if text.startswith("##[group]"):
        title = text[len("##[group]") :]
        opens = title[4:] if job is None and title.startswith("Run ") else starts_step
        return CiLine(None, job, step, opens)
    if text.startswith(("##[endgroup]", "::group::", "::endgroup::")):
        return CiLine(None, job, step, starts_step)
    for command in _KEPT_COMMANDS:
        if text.startswith(command):
            return CiLine(text[len(command) :], job, step, starts_step)
    stage = _JENKINS_STAGE.match(text)
    if stage:
        return CiLine(None, job, step, stage.group(1))
    if text.startswith("[Pipeline]"):
        return CiLine(None, job, step, starts_step)
    return CiLine(text, job, step, starts_step)
