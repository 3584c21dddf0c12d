"""Each plan task's status in the run, kept in the plan record's `outcomes`, and the report made of them.

- already_done: checked `[x]` in the plan file before the run;
- done: carried out in this run and the project's checks passed; checked off in the plan file;
- unverified: the implementer says it is done, but the checks failed after its batch, or no recorded edit
  backs its claim (`code` TASK_UNVERIFIED, workflows.plan.changes);
- failed: the implementer could not carry it out (or gave no answer about it);
- not_run: not carried out (a later batch, a dry run, or a run that stopped before it).
"""

from __future__ import annotations

from typing import Any

ALREADY_DONE, DONE, UNVERIFIED, FAILED, NOT_RUN = "already_done", "done", "unverified", "failed", "not_run"
ORDER = (DONE, ALREADY_DONE, UNVERIFIED, FAILED, NOT_RUN)
FINISHED = (DONE, ALREADY_DONE)
MAX_LISTED_TASKS = 30
MAX_TITLE_CHARS = 80
MAX_REASON_CHARS = 200


def start(record: dict[str, Any]) -> None:
    """Every task's status as the plan file says: already_done or not_run."""
    record["outcomes"] = {
        str(item["id"]): {"status": ALREADY_DONE if item.get("done") else NOT_RUN}
        for item in record.get("tasks") or []
    }


def outcome(record: dict[str, Any], task_id: int) -> dict[str, Any]:
    outcomes: dict[str, Any] = record.setdefault("outcomes", {})
    entry: dict[str, Any] = outcomes.setdefault(str(task_id), {"status": NOT_RUN})
    return entry


def settle(record: dict[str, Any], task_id: int, status: str, **fields: Any) -> None:
    entry = outcome(record, task_id)
    entry.clear()
    entry.update(status=status, **{key: value for key, value in fields.items() if value is not None})


def grouped(record: dict[str, Any]) -> dict[str, list[int]]:
    """Status -> the ids of the tasks that have it, in plan order; statuses no task has are left out."""
    groups: dict[str, list[int]] = {}
    for item in record.get("tasks") or []:
        status = str(outcome(record, int(item["id"])).get("status"))
        groups.setdefault(status, []).append(int(item["id"]))
    return {status: groups[status] for status in (*ORDER, *sorted(groups)) if status in groups}


def first_unfinished(record: dict[str, Any]) -> int | None:
    for item in record.get("tasks") or []:
        if outcome(record, int(item["id"])).get("status") not in FINISHED:
            return int(item["id"])
    return None


def summary_fields(record: dict[str, Any]) -> dict[str, Any]:
    """What the run's summary (SESSION_END) says of the plan: its file and the task ids per status."""
    return {"plan": record.get("path"), "tasks": grouped(record)}


def _short(text: object, limit: int) -> str:
    value = " ".join(str(text or "").split())
    return value if len(value) <= limit else value[: limit - 3] + "..."


def ids_text(ids: list[int]) -> str:
    return ", ".join(str(task_id) for task_id in ids)


def tasks_text(ids: list[int]) -> str:
    """`task 7` or `tasks 1, 2, 3`."""
    return f"task {ids[0]}" if len(ids) == 1 else f"tasks {ids_text(ids)}"


def headline(record: dict[str, Any]) -> str:
    groups = grouped(record)
    total = len(record.get("tasks") or [])
    finished = len(groups.get(DONE, [])) + len(groups.get(ALREADY_DONE, []))
    rest = [
        f"{len(groups[status])} {status.replace('_', ' ')}"
        for status in (UNVERIFIED, FAILED, NOT_RUN)
        if groups.get(status)
    ]
    title = f' ("{_short(record.get("title"), MAX_TITLE_CHARS)}")' if record.get("title") else ""
    tail = f"; {', '.join(rest)}" if rest else ""
    return f"Plan {record.get('path')}{title}: {finished} of {total} task(s) done{tail}."


def task_line(item: dict[str, Any], entry: dict[str, Any]) -> str:
    status = str(entry.get("status"))
    box = "[x]" if status in FINISHED else "[ ]"
    what = status.replace("_", " ")
    if entry.get("batch"):
        what += f", batch {entry['batch']}"
    if entry.get("reason"):
        what += f": {_short(entry['reason'], MAX_REASON_CHARS)}"
    return f"- {box} {item['id']}. {_short(item.get('title'), MAX_TITLE_CHARS)} ({what})"


def report_lines(record: dict[str, Any]) -> list[str]:
    """The plan's headline and one line per task (the first MAX_LISTED_TASKS), for the final message."""
    items = list(record.get("tasks") or [])
    lines = [headline(record)]
    lines += [task_line(item, outcome(record, int(item["id"]))) for item in items[:MAX_LISTED_TASKS]]
    if len(items) > MAX_LISTED_TASKS:
        lines.append(f"- and {len(items) - MAX_LISTED_TASKS} more task(s)")
    return lines
