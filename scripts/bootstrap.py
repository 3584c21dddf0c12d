"""Build and check the virtual environment that holds the fixloop engine's dependencies.

Standard library only, Python >= 3.10. Used by the entry point `scripts/fixloop` (which builds on demand)
and by the SessionStart hook (which starts a build in the background).

Layout under the data directory (`$CLAUDE_PLUGIN_DATA`, else `$FIXLOOP_DATA`, else `~/.cache/fixloop`):
    venv/                              the environment (click, jsonschema, pydantic at pinned versions)
    venv/fixloop-requirements.sha256   the stamp: sha256 of scripts/requirements.lock, written last
    venv.lock                          flock held by the one process that builds
    venv-builds.log                    one line per build started (when, how, which python)
    venv-build-output.log              what the last build's venv, pip or uv printed
    venv-build-failed.json             the last failed build: when, why, how many in a row (the backoff)
    hook-warnings.jsonl                a WARNING event (code ENGINE_BUILD_FAILED) per failed build, beside
                                       the hooks' warnings that belong to no run

`python3 bootstrap.py ensure [--data DIR]` prints the environment's python on stdout and exits 0, or
prints why it could not build it and exits 1; one progress line goes to stderr. After a failed build the
next attempt waits (5 minutes, doubling up to 6 hours) unless the requirements change or
FIXLOOP_FORCE_BUILD is set, so that an unreachable package index costs one failure, not one per call.
`check` answers without building (exit 0 fresh, 1 missing or stale). Exit 2 means bad usage.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

LIB = str(Path(__file__).resolve().parent / "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)

from fixloop.core import datadir  # noqa: E402 - the engine's standard-library part, before any venv
from fixloop.core.build_backoff import FAILED_BUILD, backoff_left, note_failure  # noqa: E402

# The SessionStart hook imports this module at the start of every session and usually only asks whether
# the environment is fresh: argparse, hashlib, shutil and subprocess are imported where they are used.

REQUIREMENTS = Path(__file__).resolve().parent / "requirements.lock"
STAMP_NAME = "fixloop-requirements.sha256"
BUILD_LOG = "venv-builds.log"
WARNINGS_LOG = "hook-warnings.jsonl"  # the hooks' file for warnings that belong to no run (hookside.context)
MIN_PYTHON = (3, 10)
BUILD_OUTPUT = "venv-build-output.log"
LOCK_WAIT_S = float(os.environ.get("FIXLOOP_BUILD_LOCK_WAIT", "900"))
STEP_TIMEOUT_S = 900
# pip output that means the package index could not be reached, and what to tell the user then.
_OFFLINE_SIGNS = (
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "Connection refused",
    "Read timed out",
    "No matching distribution found",
    "Could not find a version that satisfies",
)
OFFLINE_REASON = "pip could not download click, jsonschema and pydantic from the package index"


class BuildError(Exception):
    pass


class BackingOff(BuildError):
    """No build now: the last one failed a short while ago."""


def data_dir(explicit: str | None = None) -> Path:
    return Path(explicit or datadir.data_dir())


def requirements_hash(requirements: Path = REQUIREMENTS) -> str:
    import hashlib

    return hashlib.sha256(requirements.read_bytes()).hexdigest()


def venv_dir(data: Path) -> Path:
    return data / "venv"


def venv_python(data: Path) -> Path:
    return venv_dir(data) / "bin" / "python"


def stamp_path(data: Path) -> Path:
    return venv_dir(data) / STAMP_NAME


def is_fresh(data: Path, requirements: Path = REQUIREMENTS) -> bool:
    """True when the environment exists, its python runs, and its stamp names the current requirements."""
    try:
        stamp = stamp_path(data).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return False
    python = venv_python(data)
    if not (python.exists() and os.access(python, os.X_OK)):  # exists() follows a dangling symlink
        return False
    try:
        return stamp == requirements_hash(requirements)
    except OSError:
        return False


def log(message: str) -> None:
    sys.stderr.write(f"fixloop bootstrap: {message}\n")
    sys.stderr.flush()


@contextlib.contextmanager
def build_lock(data: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """An exclusive flock on `venv.lock`. The kernel drops it when its holder dies, so a crashed build
    never leaves a stale lock; `wait_s` bounds the wait for a live builder that hangs."""
    data.mkdir(parents=True, exist_ok=True)
    fd = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not announced:
                    log("another process is building the environment; waiting for it")
                    announced = True
                if time.monotonic() >= deadline:
                    raise BuildError(
                        f"timed out after {wait_s:g}s waiting for {data / 'venv.lock'}"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def base_python() -> str:
    """The interpreter the environment is created from: $FIXLOOP_BUILD_PYTHON, else this one."""
    configured = os.environ.get("FIXLOOP_BUILD_PYTHON")
    return configured or sys.executable


def _run(command: list[str], output: Path) -> None:
    """Run one build step; what it prints goes to `output`, never to the user's screen."""
    import subprocess

    with open(output, "a", encoding="utf-8") as sink:
        sink.write("$ " + " ".join(command) + "\n")
        sink.flush()
        try:
            done = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                timeout=STEP_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise BuildError(f"{command[0]}: {error}") from None
    if done.returncode != 0:
        raise BuildError(_failure_reason(command, done.returncode, output))


def _failure_reason(command: list[str], code: int, output: Path) -> str:
    try:
        with open(output, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        tail = ""
    if any(sign in tail for sign in _OFFLINE_SIGNS):
        return f"{OFFLINE_REASON} (details: {output})"
    return f"{' '.join(command[:3])} ... exited {code} (details: {output})"


def _build_with_uv(uv: str, target: Path, python: str, requirements: Path, output: Path) -> None:
    _run([uv, "venv", "--quiet", "--python", python, str(target)], output)
    _run(
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(target / "bin" / "python"),
            "-r",
            str(requirements),
        ],
        output,
    )


def _build_with_pip(target: Path, python: str, requirements: Path, output: Path) -> None:
    _run([python, "-m", "venv", str(target)], output)
    pip = [str(target / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    # One retry and a short timeout: an unreachable index fails in seconds instead of a minute.
    install = [*pip, "install", "--quiet", "--no-input", "--retries", "1", "--timeout", "15"]
    _run([*install, "-r", str(requirements)], output)


def _check_backoff(data: Path, digest: str) -> None:
    left, reason = backoff_left(data, digest)
    if left > 0:
        minutes = max(1, round(left / 60))
        raise BackingOff(
            f"{reason}; fixloop tries again in {minutes} min (FIXLOOP_FORCE_BUILD=1 tries at once)"
        )


def _remove(target: Path) -> None:
    """Delete an environment, its stamp first, so that no reader takes it for a fresh one meanwhile."""
    import shutil

    with contextlib.suppress(FileNotFoundError):
        (target / STAMP_NAME).unlink()
    shutil.rmtree(target, ignore_errors=True)


def _write_stamp(data: Path, digest: str) -> None:
    stamp = stamp_path(data)
    temp = stamp.with_name(f".{stamp.name}.{os.getpid()}.tmp")
    temp.write_text(digest + "\n", encoding="ascii")
    os.replace(temp, stamp)


def _check_python(python: str) -> None:
    import subprocess

    if python == sys.executable:
        version_text = "{}.{}".format(*sys.version_info[:2])
        if sys.version_info[:2] < MIN_PYTHON:
            wanted = ".".join(map(str, MIN_PYTHON))
            raise BuildError(f"{python} is Python {version_text}; fixloop needs {wanted} or newer")
        return
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BuildError(f"cannot run {python}: {error}") from None
    version = tuple(int(part) for part in done.stdout.strip().split(".") if part.isdigit())
    if done.returncode != 0 or len(version) != 2:
        raise BuildError(f"cannot run {python}")
    if version < MIN_PYTHON:
        wanted = ".".join(map(str, MIN_PYTHON))
        raise BuildError(f"{python} is Python {done.stdout.strip()}; fixloop needs {wanted} or newer")


def ensure(data: Path, requirements: Path = REQUIREMENTS) -> Path:
    """Return the environment's python, building the environment first unless it is fresh."""
    if is_fresh(data, requirements):
        return venv_python(data)
    if os.environ.get("FIXLOOP_NO_BUILD"):
        raise BuildError("the environment is missing or stale and FIXLOOP_NO_BUILD is set")
    try:
        digest = requirements_hash(requirements)
    except OSError as error:
        raise BuildError(f"cannot read {requirements}: {error.strerror or error}") from None
    data.mkdir(parents=True, exist_ok=True)
    _check_backoff(data, digest)
    with build_lock(data):
        if is_fresh(data, requirements):  # built by the process we waited for
            return venv_python(data)
        _check_backoff(data, digest)  # the build we waited for failed
        target = venv_dir(data)
        python = base_python()
        _check_python(python)
        import shutil

        uv = shutil.which("uv")
        how = "uv" if uv else "venv+pip"
        with open(data / BUILD_LOG, "a", encoding="utf-8") as build_log:
            build_log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {how} {python} {digest}\n")
        log(f"building {target} with {how} from {python} (one-time; reused until requirements change)")
        started = time.monotonic()
        output = data / BUILD_OUTPUT
        output.write_text("", encoding="utf-8")
        _remove(target)
        try:
            if uv:
                try:
                    _build_with_uv(uv, target, python, requirements, output)
                except BuildError:
                    _remove(target)
                    _build_with_pip(target, python, requirements, output)
            else:
                _build_with_pip(target, python, requirements, output)
        except BuildError as error:
            _remove(target)
            note_failure(data, digest, str(error))
            raise
        _write_stamp(data, digest)  # last: a half-built environment never looks fresh
        with contextlib.suppress(FileNotFoundError):
            (data / FAILED_BUILD).unlink()
        log(f"environment ready in {time.monotonic() - started:.1f}s")
    return venv_python(data)


def record_failure(data: Path, reason: str) -> None:
    """Leave a WARNING event (code ENGINE_BUILD_FAILED) in <data>/hook-warnings.jsonl, so that a failed
    build stays on record after its output is gone (SessionStart builds in the background). Never raises."""
    try:
        from fixloop.store.logwriter import EventLog

        EventLog(data / WARNINGS_LOG, None, os.environ.get("CLAUDE_CODE_SESSION_ID") or "unknown").emit(
            "W",
            "WARNING",
            code="ENGINE_BUILD_FAILED",
            message=f"cannot build the environment: {reason}",
            data_dir=str(data),
            impact="fixloop runs only with an interpreter that has its dependencies (FIXLOOP_PYTHON or "
            "python3 on PATH); otherwise its commands answer ENGINE_UNAVAILABLE",
        )
    except Exception:  # a record of the failure must not fail the build's caller
        pass


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="bootstrap.py", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("action", choices=("ensure", "check"))
    parser.add_argument(
        "--data", help="data directory (default: $CLAUDE_PLUGIN_DATA, $FIXLOOP_DATA or ~/.cache/fixloop)"
    )
    parser.add_argument("--requirements", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    requirements = Path(args.requirements) if args.requirements else REQUIREMENTS
    if args.action == "check":
        fresh = is_fresh(data, requirements)
        if fresh:
            print(venv_python(data))
        return 0 if fresh else 1
    try:
        python = ensure(data, requirements)
    except BackingOff as error:  # already on record
        print(f"cannot build the environment: {error}")
        return 1
    except (BuildError, OSError) as error:
        print(f"cannot build the environment: {error}")
        record_failure(data, str(error))
        return 1
    print(python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
