"""Running the GitHub CLI: an argument list (never a shell), a timeout, no prompts, the user's own setup.

The environment is the user's (so `gh auth login`, GH_HOST, GH_TOKEN, GH_ENTERPRISE_TOKEN, proxies and
certificates all apply) plus GH_PROMPT_DISABLED=1: gh must never wait for an answer nobody can give.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from fixloop.core.errors import FixloopError
from fixloop.core.redact import redact

GH_TIMEOUT_SECONDS = 120.0
INSTALL_HINT = (
    "Install the GitHub CLI (https://cli.github.com), e.g. `brew install gh` or `sudo apt install gh`."
)
# Added to the user's environment: no prompt, no update check, no colour codes in what we parse.
FIXED_ENV = {"GH_PROMPT_DISABLED": "1", "GH_NO_UPDATE_NOTIFIER": "1", "NO_COLOR": "1"}
MAX_ERROR_CHARS = 2000


@dataclass(frozen=True)
class GhResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def error_text(self) -> str:
        """gh's own words about a failure (its standard error, secrets masked), bounded."""
        text = redact(self.stderr.strip() or self.stdout.strip())
        return text[-MAX_ERROR_CHARS:]


class Gh:
    """The `gh` command in one working directory (gh reads the repository from its git remotes)."""

    def __init__(
        self, cwd: Path, environ: Mapping[str, str] | None = None, timeout: float = GH_TIMEOUT_SECONDS
    ) -> None:
        self.cwd = cwd
        self.env = {**(os.environ if environ is None else environ), **FIXED_ENV}
        self.timeout = timeout

    def executable(self) -> str | None:
        return shutil.which("gh", path=self.env.get("PATH", os.defpath))

    def run(self, *args: str, input_text: str | None = None) -> GhResult:
        """Run `gh ARGS`; GH_UNAVAILABLE when gh cannot be started, GH_TIMEOUT when it takes too long.
        A non-zero exit is returned, not raised: each caller says what it means."""
        return self._run(args, input_text, None)

    def run_to_file(self, path: Path, *args: str) -> GhResult:
        """Run `gh ARGS` with its standard output written to `path` (a CI log can be far larger than what
        should be held in memory); the result's stdout is empty. Errors as `run`."""
        with path.open("wb") as handle:
            return self._run(args, None, handle)

    def _run(self, args: tuple[str, ...], input_text: str | None, stdout: BinaryIO | None) -> GhResult:
        executable = self.executable()
        if executable is None:
            raise FixloopError("GH_UNAVAILABLE", f"The GitHub CLI `gh` is not installed. {INSTALL_HINT}")
        try:
            if stdout is None:
                done = subprocess.run(
                    [executable, *args],
                    cwd=self.cwd,
                    env=self.env,
                    input=input_text,
                    stdin=None if input_text is not None else subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    timeout=self.timeout,
                    check=False,
                )
                return GhResult(tuple(args), done.returncode, done.stdout, done.stderr)
            written = subprocess.run(
                [executable, *args],
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=subprocess.PIPE,
                timeout=self.timeout,
                check=False,
            )
            stderr = written.stderr.decode("utf-8", "replace")
            return GhResult(tuple(args), written.returncode, "", stderr)
        except subprocess.TimeoutExpired:
            raise FixloopError(
                "GH_TIMEOUT",
                f"`gh {' '.join(args[:2])}` did not finish within {self.timeout:g}s.",
                command=["gh", *args[:2]],
            ) from None
        except OSError as error:
            raise FixloopError(
                "GH_UNAVAILABLE", f"Cannot run gh ({error.strerror or error}). {INSTALL_HINT}"
            ) from None

    def checked(self, *args: str, code: str = "GH_COMMAND_FAILED", input_text: str | None = None) -> str:
        """Standard output of `gh ARGS`; a non-zero exit is FixloopError `code` with gh's message."""
        result = self.run(*args, input_text=input_text)
        if not result.ok:
            raise FixloopError(
                code,
                f"`gh {' '.join(args[:2])}` failed: {result.error_text()}",
                command=["gh", *args[:2]],
                exit_status=result.returncode,
            )
        return result.stdout
