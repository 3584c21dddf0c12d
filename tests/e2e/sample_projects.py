"""The sample projects of the bugfix workflows (tests/e2e/samples/NAME): one per stack, each with exactly one
failing test caused by a real one-line bug, run by a real test runner that scripts/dev/setup installs.

- ``backend``: a Python package tested with pytest (run as ``python -m pytest -q``; ``python`` is the repo's
  .venv, see :func:`sample_env`).
- ``frontend``: a TypeScript module and DOM helper tested with Vitest and happy-dom (``npx vitest run``).
- ``e2e``: a static page served by Python's http.server and tested with Playwright in the system's Chromium
  (``npx playwright test``).

:func:`make_sample` copies a sample into a fresh git repository. A Node sample's ``node_modules`` is a
symlink to the one setup installed in the repository (``npm ci`` in the sample), so a copy costs no install;
the samples' ``.gitignore`` keeps the link out of git. The known fixes are data (:data:`SAMPLES`), for
scripting a model's edit and for checking that the fix makes the suite pass.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from claude_runner import E2E_DIR, REPO_ROOT, git

SAMPLES_DIR = E2E_DIR / "samples"
VENV_BIN = REPO_ROOT / ".venv" / "bin"
CHROMIUM_ENV = "CHROMIUM_PATH"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
DEFAULT_TEST_TIMEOUT = 120.0
SETUP_HINT = "run: bash scripts/dev/setup"
# What a copy leaves behind: caches and test output of earlier runs inside the repository's sample.
_NOT_COPIED = shutil.ignore_patterns(
    "node_modules",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".vite",
    "test-results",
    "playwright-report",
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PLAYWRIGHT_SEP = "\u203a"  # the angle quote Playwright puts between a test's file and its title


@dataclass(frozen=True)
class Fix:
    """The one-line fix of a sample's bug: replace ``old`` (found exactly once) by ``new`` in ``file``."""

    file: str
    old: str
    new: str


@dataclass(frozen=True)
class Outcome:
    """What a test run reported: the failing tests as the runner names them, and the summary's counts."""

    failed_tests: list[str]
    failed: int
    passed: int


@dataclass(frozen=True)
class Sample:
    name: str
    runner: str  # "pytest", "vitest" or "playwright": how to read its output
    failing_test: str  # the failing test as its runner names it in the output
    passing: int  # how many tests pass before the fix
    bug: str
    fix: Fix
    node: bool  # has package.json, and node_modules installed by setup

    @property
    def source(self) -> Path:
        return SAMPLES_DIR / self.name


class SampleNotReady(RuntimeError):
    """The sample's runner, dependencies or browser are not installed."""


SAMPLES: dict[str, Sample] = {
    "backend": Sample(
        name="backend",
        runner="pytest",
        failing_test="tests/test_cart.py::test_ten_units_get_the_bulk_discount",
        passing=2,
        bug="line_total gives the bulk discount from 11 units, not from BULK_QUANTITY (10): `>` for `>=`",
        fix=Fix(
            file="pricing/cart.py",
            old="    if line.quantity > BULK_QUANTITY:\n",
            new="    if line.quantity >= BULK_QUANTITY:\n",
        ),
        node=False,
    ),
    "frontend": Sample(
        name="frontend",
        runner="vitest",
        failing_test="src/cartBadge.test.ts > cart badge > shows the plural for an empty cart",
        passing=2,
        bug='itemCountLabel uses the singular for every count up to 1, so an empty cart reads "0 item"',
        fix=Fix(
            file="src/cartBadge.ts",
            old='  const noun = count > 1 ? "items" : "item";\n',
            new='  const noun = count === 1 ? "item" : "items";\n',
        ),
        node=True,
    ),
    "e2e": Sample(
        name="e2e",
        runner="playwright",
        failing_test=f"tests/cart.spec.ts:9:1 {PLAYWRIGHT_SEP} "
        "adding products updates the count and the total",
        passing=1,
        bug="adding a product writes the new total into the item count (#count) instead of #total",
        fix=Fix(
            file="public/cart.js",
            old="    count.textContent = `$${(cents / 100).toFixed(2)}`;\n",
            new="    total.textContent = `$${(cents / 100).toFixed(2)}`;\n",
        ),
        node=True,
    ),
}
SAMPLE_NAMES: tuple[str, ...] = tuple(SAMPLES)
FIXES: dict[str, Fix] = {name: sample.fix for name, sample in SAMPLES.items()}


def _sample(name: str) -> Sample:
    try:
        return SAMPLES[name]
    except KeyError:
        raise ValueError(f"unknown sample {name!r}; known: {', '.join(SAMPLE_NAMES)}") from None


def sample_test_command(name: str) -> str:
    """The sample's ``test_command`` from its ``.claude/fixloop.json``."""
    config = json.loads((_sample(name).source / ".claude" / "fixloop.json").read_text(encoding="utf-8"))
    return str(config["test_command"])


def chromium_path(environ: Mapping[str, str] | None = None) -> Path:
    """The browser the e2e sample's Playwright config launches: ``$CHROMIUM_PATH``, else /usr/bin/chromium."""
    env = os.environ if environ is None else environ
    return Path(env.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM)


def sample_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment to run a sample's test command in: the caller's, with the repo's .venv/bin first on
    PATH (so ``python`` has pytest) and no forced colours."""
    env = dict(os.environ if environ is None else environ)
    env["PATH"] = os.pathsep.join([str(VENV_BIN), env.get("PATH", os.defpath)])
    env.pop("FORCE_COLOR", None)
    return env


def missing_requirements(name: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """What the sample's test command needs and this machine lacks (empty when it can run)."""
    sample = _sample(name)
    path = sample_env(environ)["PATH"]
    missing: list[str] = []
    if sample.runner == "pytest":
        python = shutil.which("python", path=path)
        if python is None or not (Path(python).parent / "pytest").exists():
            missing.append(f"python with pytest on PATH (the repo's .venv; {SETUP_HINT})")
    if sample.node:
        if shutil.which("npx", path=path) is None:
            missing.append("npx (Node.js and npm)")
        runner_bin = sample.source / "node_modules" / ".bin" / sample.runner
        if not runner_bin.exists():
            missing.append(f"{runner_bin.relative_to(REPO_ROOT)} ({SETUP_HINT})")
    if sample.runner == "playwright":
        browser = chromium_path(environ)
        if not (browser.is_file() and os.access(browser, os.X_OK)):
            missing.append(f"Chromium at {browser} (Debian package `chromium`; {SETUP_HINT})")
        if shutil.which("python3", path=path) is None:
            missing.append("python3 (serves the page)")
    return missing


def make_sample(name: str, dest: Path) -> Path:
    """Copy sample ``name`` to ``dest`` (which must not exist), link a Node sample's ``node_modules`` to the
    one installed in the repository, and make ``dest`` a git repository on branch ``main`` with one commit
    holding every file (the link is git-ignored). Deterministic author and dates. Returns ``dest``.

    Raises SampleNotReady when a Node sample's dependencies are not installed (scripts/dev/setup does it)."""
    sample = _sample(name)
    modules = sample.source / "node_modules"
    if sample.node and not modules.is_dir():
        raise SampleNotReady(f"{modules.relative_to(REPO_ROOT)} is not installed; {SETUP_HINT}")
    shutil.copytree(sample.source, dest, ignore=_NOT_COPIED, symlinks=True)
    if sample.node:
        (dest / "node_modules").symlink_to(modules, target_is_directory=True)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "config", "user.name", "fixloop e2e")
    git(dest, "config", "user.email", "e2e@fixloop.invalid")
    git(dest, "config", "commit.gpgsign", "false")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", f"sample project: {name}")
    return dest


def apply_fix(name: str, project: Path) -> None:
    """Apply the sample's known one-line fix to ``project`` (a copy made by :func:`make_sample`)."""
    fix = _sample(name).fix
    path = project / fix.file
    text = path.read_text(encoding="utf-8")
    found = text.count(fix.old)
    if found != 1:
        raise ValueError(f"{fix.file}: the line to fix occurs {found} times, expected once: {fix.old!r}")
    path.write_text(text.replace(fix.old, fix.new), encoding="utf-8")


def run_tests(
    name: str,
    project: Path,
    *,
    timeout: float = DEFAULT_TEST_TIMEOUT,
    environ: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the sample's test command through the shell in ``project``, stdout and stderr together, in its
    own process group (ended whole on timeout, which raises subprocess.TimeoutExpired)."""
    process = subprocess.Popen(
        sample_test_command(name),
        shell=True,
        cwd=project,
        env=sample_env(environ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, output, None)


def _count(pattern: str, text: str) -> int:
    found = re.findall(pattern, text, flags=re.MULTILINE)
    return int(found[-1]) if found else 0


def _pytest(text: str) -> Outcome:
    failed = re.findall(r"^FAILED (\S+)", text, flags=re.MULTILINE)
    summary = next(
        (line for line in reversed(text.splitlines()) if re.search(r"\d+ (passed|failed)", line)), ""
    )
    return Outcome(failed, _count(r"(\d+) failed", summary), _count(r"(\d+) passed", summary))


def _vitest(text: str) -> Outcome:
    failed = re.findall(r"^ FAIL  (.+?)\s*$", text, flags=re.MULTILINE)
    summary = next((line for line in text.splitlines() if line.strip().startswith("Tests ")), "")
    return Outcome(failed, _count(r"(\d+) failed", summary), _count(r"(\d+) passed", summary))


def _playwright(text: str) -> Outcome:
    # "  1) FILE:LINE:COLUMN SEP TITLE ────" in the list of failures at the end
    failed = re.findall(rf"^\s+\d+\) (\S+ {PLAYWRIGHT_SEP} .+?)\s*\u2500*\s*$", text, flags=re.MULTILINE)
    return Outcome(failed, _count(r"^\s+(\d+) failed\s*$", text), _count(r"^\s+(\d+) passed\b", text))


_READERS: dict[str, Callable[[str], Outcome]] = {
    "pytest": _pytest,
    "vitest": _vitest,
    "playwright": _playwright,
}


def read_outcome(name: str, output: str) -> Outcome:
    """The failing tests and the pass/fail counts in the output of the sample's test command."""
    return _READERS[_sample(name).runner](_ANSI.sub("", output))
