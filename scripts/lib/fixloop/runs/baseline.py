"""The project's baseline: review findings the team accepted, which no later review reports or fixes.

It lives in the repository (`.fixloop/baseline.json`) so that a team shares it and reviews its changes:
reviewable JSON, two-space indents, one finding per object, in a stable order (file, line, category,
fingerprint). Each finding is keyed by fixloop's issue fingerprint (review.identity) and keeps what a person
and the reviewers need to recognise it: file, line, category, description, and why it was accepted.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from fixloop.core import jsoncodec, timekeeping
from fixloop.core.errors import FixloopError
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.runs.lifecycle import Clock, load_run
from fixloop.store import layout
from fixloop.store.atomic import write_atomic
from fixloop.store.locking import file_lock

BASELINE_FILE = Path(".fixloop") / "baseline.json"
BASELINE_VERSION = 1
MAX_BASELINE_BYTES = 5_000_000
MAX_REASON_CHARS = 500
_FINGERPRINT = re.compile(r"^[0-9a-f]{8,64}$")
_REQUIRED_TEXT = ("fingerprint", "file", "category", "description", "reason")


class _RequiredEntry(TypedDict):
    fingerprint: str
    file: str
    line: int
    category: str
    description: str
    reason: str
    issue_id: str | None
    run_id: str | None
    added_at: str | None


class BaselineEntry(_RequiredEntry, total=False):
    """A baseline finding; `dismissed_by`: the person who dismissed it on a pull request."""

    dismissed_by: str | None


def baseline_path(root: Path) -> Path:
    return root / BASELINE_FILE


def _invalid(path: Path, message: str) -> FixloopError:
    return FixloopError(
        "INVALID_BASELINE",
        f"Invalid baseline {path}: {message}.",
        file=str(path),
        suggestion="Fix the file by hand, or remove it to start an empty baseline.",
    )


def _entry(path: Path, index: int, item: object) -> BaselineEntry:
    where = f"findings[{index}]"
    if not isinstance(item, dict):
        raise _invalid(path, f"{where} must be an object")
    for key in _REQUIRED_TEXT:
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise _invalid(path, f"{where}.{key} must be a non-empty string")
    line = item.get("line")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise _invalid(path, f"{where}.line must be an integer from 1")
    if not _FINGERPRINT.match(item["fingerprint"]):
        raise _invalid(path, f"{where}.fingerprint must be a fixloop fingerprint (lowercase hex)")
    optional = {key: item.get(key) for key in ("issue_id", "run_id", "added_at", "dismissed_by")}
    for key, value in optional.items():
        if value is not None and not isinstance(value, str):
            raise _invalid(path, f"{where}.{key} must be a string or null")
    entry: BaselineEntry = {
        "fingerprint": item["fingerprint"],
        "file": item["file"],
        "line": line,
        "category": item["category"],
        "description": item["description"],
        "reason": item["reason"],
        "issue_id": optional["issue_id"],
        "run_id": optional["run_id"],
        "added_at": optional["added_at"],
    }
    if optional["dismissed_by"] is not None:
        entry["dismissed_by"] = optional["dismissed_by"]
    return entry


def load_baseline(root: Path) -> list[BaselineEntry]:
    """The accepted findings ([] when the project has no baseline); INVALID_BASELINE when unreadable."""
    path = baseline_path(root)
    try:
        raw = path.read_bytes()[: MAX_BASELINE_BYTES + 1]
    except FileNotFoundError:
        return []
    except OSError as error:
        raise _invalid(path, f"cannot read it ({error.strerror or error})") from None
    if len(raw) > MAX_BASELINE_BYTES:
        raise _invalid(path, f"larger than {MAX_BASELINE_BYTES} bytes")
    try:
        document = jsoncodec.loads_document(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _invalid(path, f"not JSON ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("findings"), list):
        raise _invalid(path, 'expected {"version": 1, "findings": [...]}')
    if document.get("version") != BASELINE_VERSION:
        raise _invalid(path, f"version must be {BASELINE_VERSION}")
    return [_entry(path, index, item) for index, item in enumerate(document["findings"])]


def _sort_key(entry: BaselineEntry) -> tuple[str, int, str, str]:
    return entry["file"], entry["line"], entry["category"], entry["fingerprint"]


def baseline_text(entries: Sequence[BaselineEntry]) -> str:
    """The file's text: stable order and layout, so that a change is a small diff."""
    findings = sorted(entries, key=_sort_key)
    document = {"version": BASELINE_VERSION, "findings": findings}
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _lock(root: Path) -> file_lock:
    # The lock file lives in fixloop's own folder (git ignores it), not next to the shared baseline.
    layout.require_own_dir_inside(root, layout.fixloop_dir(root))
    layout.require_own_dir_inside(root, baseline_path(root).parent)
    return file_lock(os.path.join(layout.fixloop_dir(root), "baseline"))


def _write(root: Path, entries: Sequence[BaselineEntry]) -> None:
    write_atomic(baseline_path(root), baseline_text(entries).encode("utf-8"))


# ---- the run's issues -------------------------------------------------------------------------------


def run_issues(state: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each issue id of a run -> its latest version (reported or removed by the verifier), round by round."""
    review = state.get("review")
    rounds = review.get("rounds") if isinstance(review, dict) else None
    found: dict[str, dict[str, Any]] = {}
    for rnd in rounds or []:
        if not isinstance(rnd, dict):
            continue
        for key in ("removed_issues", "issues"):
            for issue in rnd.get(key) or []:
                if isinstance(issue, dict) and isinstance(issue.get("id"), str) and issue.get("fingerprint"):
                    found[issue["id"]] = issue
    return found


def _as_entry(issue: Mapping[str, Any], reason: str, run_id: str, added_at: str) -> BaselineEntry:
    return {
        "fingerprint": str(issue["fingerprint"]),
        "file": str(issue.get("file") or ""),
        "line": int(issue.get("line") or 1),
        "category": str(issue.get("category") or ""),
        "description": str(issue.get("description") or ""),
        "reason": reason,
        "issue_id": str(issue["id"]),
        "run_id": run_id,
        "added_at": added_at,
    }


def _check_reason(reason: str) -> str:
    text = " ".join(reason.split())
    if not text:
        raise FixloopError(
            "MISSING_ARGUMENT_VALUE",
            "--reason needs a text: why the team accepts these findings.",
            argument="--reason",
        )
    if len(text) > MAX_REASON_CHARS:
        raise FixloopError(
            "INVALID_ARGUMENT",
            f"--reason is {len(text)} characters long; at most {MAX_REASON_CHARS}.",
            argument="--reason",
        )
    return text


def add_findings(
    root: Path, run_id: str, issue_ids: Sequence[str], reason: str, clock: Clock | None = None
) -> dict[str, Any]:
    """Accept issues of run `run_id` into the baseline: all of them, or none when one id is unknown."""
    text = _check_reason(reason)
    if not issue_ids:
        raise FixloopError("MISSING_ARGUMENT", "Name at least one issue id (e.g. FL-003).", argument="ID")
    issues = run_issues(load_run(root, run_id))
    wanted = list(dict.fromkeys(item.strip().upper() for item in issue_ids))
    unknown = [item for item in wanted if item not in issues]
    if unknown:
        raise FixloopError(
            "UNKNOWN_ISSUE",
            f"Run {run_id} has no issue {', '.join(unknown)}.",
            received=unknown,
            valid_values=sorted(issues),
            run_id=run_id,
        )
    stamp = utc_timestamp_ms(timekeeping.now_ms(clock or timekeeping.default_clock) / 1000)
    with _lock(root):
        entries = load_baseline(root)
        known = {entry["fingerprint"] for entry in entries}
        added: list[BaselineEntry] = []
        already: list[str] = []
        for issue_id in wanted:
            entry = _as_entry(issues[issue_id], text, run_id, stamp)
            if entry["fingerprint"] in known:
                already.append(issue_id)
                continue
            known.add(entry["fingerprint"])
            added.append(entry)
        if added:
            _write(root, [*entries, *added])
    return {
        "file": str(baseline_path(root)),
        "run_id": run_id,
        "added": sorted(added, key=_sort_key),
        "already_in_baseline": already,
        "count": len(entries) + len(added),
    }


def add_dismissals(
    root: Path, run_id: str, dismissals: Sequence[tuple[Mapping[str, Any], str, str, str | None]]
) -> list[BaselineEntry]:
    """Keep findings dismissed on a pull request ((issue, reason, who dismissed it, when)): the baseline
    entries added (a fingerprint already there is left as it is)."""
    now = utc_timestamp_ms(timekeeping.now_ms(timekeeping.default_clock) / 1000)
    with _lock(root):
        entries = load_baseline(root)
        known = {entry["fingerprint"] for entry in entries}
        added: list[BaselineEntry] = []
        for issue, reason, author, when in dismissals:
            entry = _as_entry(
                issue, " ".join(reason.split())[:MAX_REASON_CHARS] or "dismissed", run_id, when or now
            )
            entry["dismissed_by"] = author
            if entry["fingerprint"] not in known:
                known.add(entry["fingerprint"])
                added.append(entry)
        if added:
            _write(root, [*entries, *added])
    return added


def list_findings(root: Path) -> dict[str, Any]:
    entries = sorted(load_baseline(root), key=_sort_key)
    return {"file": str(baseline_path(root)), "count": len(entries), "findings": entries}


def remove_finding(root: Path, fingerprint: str) -> dict[str, Any]:
    """Take one finding out of the baseline (NOT_IN_BASELINE when it is not there)."""
    value = fingerprint.strip().lower()
    with _lock(root):
        entries = load_baseline(root)
        kept = [entry for entry in entries if entry["fingerprint"] != value]
        if len(kept) == len(entries):
            raise FixloopError(
                "NOT_IN_BASELINE",
                f"No finding with fingerprint {fingerprint!r} in {baseline_path(root)}.",
                received=fingerprint,
                valid_values=sorted(entry["fingerprint"] for entry in entries),
                exit_code=1,
            )
        _write(root, kept)
    removed = [entry for entry in entries if entry["fingerprint"] == value]
    return {"file": str(baseline_path(root)), "removed": removed, "count": len(kept)}
