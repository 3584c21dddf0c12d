"""Which verification commands the user approved, per project: trust on first use.

A project's commands come from its repository (`.claude/fixloop.json`, package.json, ...), so a stranger's
change can make them anything. fixloop runs them only once the user has approved exactly these commands
for exactly this project, and asks again whenever they change, as direnv's `allow` does: their text, or
what they run (runs.command_binding: a package.json script's body, an executable's real path and content).
Approvals live in the plugin's data directory, never in the repository. A terminal's `fixloop` uses the
installed plugin's data directory too (scripts/fixloop); approvals made from a clone never installed, in
~/.cache/fixloop, are read as well, so an approval holds whichever way the engine was started.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core import datadir, jsoncodec
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.runs import command_binding
from fixloop.store.atomic import write_atomic
from fixloop.store.locking import file_lock

APPROVALS_DIR = "approvals"
MAX_APPROVALS_PER_PROJECT = 50
NEVER_APPROVED = "These commands were never approved for this project."


def commands_digest(commands: Mapping[str, str]) -> str:
    """The sha256 of the exact commands, step by step."""
    canonical = json.dumps(dict(sorted(commands.items())), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def approvals_file(project: Path, data: str | None = None) -> Path:
    key = hashlib.sha256(str(project.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Path(data or datadir.data_dir()) / APPROVALS_DIR / f"{key}.json"


def _approvals_read(project: Path, data: str | None) -> list[dict[str, Any]]:
    """The approvals of `project` in the data directory, then those a never-installed clone stored."""
    paths = [approvals_file(project, data)]
    if data is None:
        unbound = approvals_file(project, datadir.data_dir({"HOME": os.environ.get("HOME", "")}))
        paths += [unbound] if unbound != paths[0] else []
    return [item for path in paths for item in _approvals(path)]


def _approvals(path: Path) -> list[dict[str, Any]]:
    try:
        document = jsoncodec.loads_document(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    approved = document.get("approved") if isinstance(document, dict) else None
    return [item for item in approved or [] if isinstance(item, dict)]


def bound_to(project: Path, commands: Mapping[str, str]) -> dict[str, list[dict[str, str]]]:
    """step -> what decides that step's command beyond its text (runs.command_binding)."""
    return {step: command_binding.bindings(project, command) for step, command in sorted(commands.items())}


def binding_digest(project: Path, commands: Mapping[str, str]) -> str:
    return command_binding.bindings_digest(bound_to(project, commands))


def not_approved_because(project: Path, commands: Mapping[str, str], data: str | None = None) -> str | None:
    """None when the user approved `commands` as they are today; else why not, in one sentence.

    An approval holds the commands' text and what they ran then (a package.json script's body, the real
    path and content of an executable in the project); when that changed, the commands must be approved
    again. An approval written before fixloop recorded this holds no binding and is asked again."""
    digest = commands_digest(commands)
    same_text = [item for item in _approvals_read(project, data) if item.get("digest") == digest]
    if not same_text:
        return NEVER_APPROVED
    now = bound_to(project, commands)
    now_digest = command_binding.bindings_digest(now)
    if any(item.get("binding_digest") == now_digest for item in same_text):
        return None
    recorded = [item for item in same_text if isinstance(item.get("bindings"), dict)]
    if not recorded:
        return (
            "These commands were approved before fixloop recorded what they run (package.json scripts, the "
            "executables they resolve to); approve them again."
        )
    changed = command_binding.changes(recorded[-1]["bindings"], now) or ["what they run"]
    return f"What these commands run changed since they were approved ({'; '.join(changed)}); approve again."


def is_approved(project: Path, commands: Mapping[str, str], data: str | None = None) -> bool:
    return not_approved_because(project, commands, data) is None


def approved_before(reason: str | None) -> str:
    """The sentence to put before a question about commands: why an earlier approval no longer holds."""
    return "" if reason is None or reason == NEVER_APPROVED else f"{reason}\n"


def approve(project: Path, commands: Mapping[str, str], data: str | None = None, now_ms: int = 0) -> Path:
    """Remember that the user approved `commands` for `project`, bound to what they run today; the file."""
    path = approvals_file(project, data)
    digest = commands_digest(commands)
    bound = bound_to(project, commands)
    with file_lock(path):
        approved = [item for item in _approvals(path) if item.get("digest") != digest]
        approved.append(
            {
                "digest": digest,
                "commands": dict(commands),
                "bindings": bound,
                "binding_digest": command_binding.bindings_digest(bound),
                "approved_at": utc_timestamp_ms(now_ms / 1000),
            }
        )
        document = {"project": str(project.resolve()), "approved": approved[-MAX_APPROVALS_PER_PROJECT:]}
        previous = os.umask(0o077)
        try:
            write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        finally:
            os.umask(previous)
    return path
