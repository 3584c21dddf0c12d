"""Which verification commands the user approved, per project: trust on first use.

A project's commands come from its repository (`.claude/fixloop.json`, package.json, ...), so a stranger's
change can make them anything. fixloop runs them only once the user has approved exactly these commands
for exactly this project, and asks again whenever they change, as direnv's `allow` does. Approvals live in
the plugin's data directory, never in the repository.
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
from fixloop.store.atomic import write_atomic
from fixloop.store.locking import file_lock

APPROVALS_DIR = "approvals"
MAX_APPROVALS_PER_PROJECT = 50


def commands_digest(commands: Mapping[str, str]) -> str:
    """The sha256 of the exact commands, step by step."""
    canonical = json.dumps(dict(sorted(commands.items())), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def approvals_file(project: Path, data: str | None = None) -> Path:
    key = hashlib.sha256(str(project.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Path(data or datadir.data_dir()) / APPROVALS_DIR / f"{key}.json"


def _approvals(path: Path) -> list[dict[str, Any]]:
    try:
        document = jsoncodec.loads_document(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    approved = document.get("approved") if isinstance(document, dict) else None
    return [item for item in approved or [] if isinstance(item, dict)]


def is_approved(project: Path, commands: Mapping[str, str], data: str | None = None) -> bool:
    digest = commands_digest(commands)
    return any(item.get("digest") == digest for item in _approvals(approvals_file(project, data)))


def approve(project: Path, commands: Mapping[str, str], data: str | None = None, now_ms: int = 0) -> Path:
    """Remember that the user approved `commands` for `project`; the approvals file."""
    path = approvals_file(project, data)
    digest = commands_digest(commands)
    with file_lock(path):
        approved = [item for item in _approvals(path) if item.get("digest") != digest]
        approved.append(
            {"digest": digest, "commands": dict(commands), "approved_at": utc_timestamp_ms(now_ms / 1000)}
        )
        document = {"project": str(project.resolve()), "approved": approved[-MAX_APPROVALS_PER_PROJECT:]}
        previous = os.umask(0o077)
        try:
            write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        finally:
            os.umask(previous)
    return path
