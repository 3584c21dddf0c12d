"""Which modules a piece of engine code, or a hook process, loads: run in a fresh interpreter started as the
hooks start one (`python -E -S`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

LIB = Path(__file__).resolve().parents[2] / "scripts" / "lib"

# What no hook may load on a per-call path: the engine's layers above store (and what they bring, pydantic
# and click), and the standard modules that cost about as much as the interpreter's own start.
ENGINE_PACKAGES = ("fixloop.contracts", "fixloop.runs", "fixloop.review", "fixloop.report", "fixloop.cli")
HEAVY_PACKAGES = ("pydantic", "click", "json", "re", "pathlib", "typing", "collections")
NOT_IN_HOOKS = (*ENGINE_PACKAGES, *HEAVY_PACKAGES)


def in_packages(modules: Iterable[str], packages: Iterable[str]) -> list[str]:
    """The `modules` that are one of `packages` or inside one (`fixloop.runs` holds `fixloop.runs.config`),
    sorted."""
    prefixes = tuple(packages)
    return sorted(
        module for module in set(modules) if any(module == p or module.startswith(f"{p}.") for p in prefixes)
    )


def modules_loaded_by(code: str, watched: tuple[str, ...]) -> list[str]:
    """Run `code` under `python -E -S` with the engine's modules importable; the modules it loaded that are
    `watched` or inside a watched package (an assertion error in `code` fails the call)."""
    setup = f"import sys\nsys.path.insert(0, {str(LIB)!r})\n"
    report = "\nprint(*sys.modules)\n"
    done = subprocess.run(
        [sys.executable, "-E", "-S", "-c", setup + code + report], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return in_packages(done.stdout.split(), watched)


def modules_imported_by_process(
    argv: list[str], stdin: bytes, env: Mapping[str, str], cwd: Path | str
) -> set[str]:
    """Every module the process `argv` (a Python started with `-X importtime`) imported, from its report."""
    done = subprocess.run(argv, input=stdin, capture_output=True, env=dict(env), cwd=cwd, check=True)
    lines = done.stderr.decode().splitlines()
    return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
