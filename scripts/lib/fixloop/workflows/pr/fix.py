"""Phase 4: the review fixer fixes the `fix` threads; verification gates it; the engine commits.

Stages (kept in the phase's data): a baseline verification, a snapshot and the fixer, verification of
the change, the commit. A step that passed before the fix and fails after it rolls back exactly the
files the fixer changed (store.snapshot); otherwise the engine commits exactly those files and records
the commit per thread. A dry run fixes and commits nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core.agent_names import FIXER_AGENT
from fixloop.core.errors import FixloopError
from fixloop.runs.verification import FAILED_STATUSES, STEP_NAMES
from fixloop.store import layout, snapshot
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Call, Dispatch, Outcome, PhaseDone, PhaseFailed, Work
from fixloop.workflows.phase import Phase
from fixloop.workflows.pr import performers
from fixloop.workflows.pr.commit import commit_message
from fixloop.workflows.pr.record import missing, prepared, thread_by_id
from fixloop.workflows.pr.tasks import fixer_task, thread_text

VERIFICATION = "verification"
SNAPSHOT_DIR = "pr-fix"


def regressions(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> list[str]:
    """Verification steps that fail after the fix and did not fail before it."""
    failed = [name for name in STEP_NAMES if (after.get(name) or {}).get("status") in FAILED_STATUSES]
    return [name for name in failed if ((before or {}).get(name) or {}).get("status") not in FAILED_STATUSES]


class FixPhase(Phase):
    agents = (FIXER_AGENT,)

    def contract_kind(self, agent: str) -> str | None:
        return "fixer" if agent == FIXER_AGENT else None

    def apply_work(self, ctx: PhaseContext, kind: str, result: Any) -> None:
        key = f"{kind}:{ctx.data.get('stage')}" if kind == VERIFICATION else kind
        ctx.store_work(key, result)

    def step(self, ctx: PhaseContext) -> Outcome:
        record = prepared(ctx, "classifications")
        if record is None:
            return PhaseFailed(*missing(ctx, "classifications"))
        stage = ctx.data.get("stage")
        if stage is None:
            return self._start(ctx, record)
        if stage == "baseline":
            return self._dispatch(ctx, record)
        if stage == "fixing":
            return self._after_fix(ctx, record)
        if stage == "verifying":
            return self._after_verification(ctx, record)
        return self._after_commit(ctx, record)

    # ---- the stages -------------------------------------------------------------------------------

    def _start(self, ctx: PhaseContext, record: dict[str, Any]) -> Outcome:
        labels = record["classifications"]
        ids = [str(t["id"]) for t in record["kept"] if (labels.get(str(t["id"])) or {}).get("label") == "fix"]
        record["fixes"] = {}
        record["commit"] = None
        if not ids:
            return PhaseDone("skipped", {"fix_threads": 0})
        if ctx.dry_run:
            record["fixes"] = {thread_id: {"status": "dry_run"} for thread_id in ids}
            return PhaseDone("skipped", {"fix_threads": len(ids), "dry_run": True})
        threads = thread_by_id(record)
        files = sorted({str(threads[i]["path"]) for i in ids if threads[i].get("path")})
        ctx.data.update(stage="baseline", threads=ids, files=files)
        ctx.state["changed_files"] = [path for path in files if (ctx.root / path).exists()]
        return Work(VERIFICATION, {"slot": "pr_baseline"})

    def _dispatch(self, ctx: PhaseContext, record: dict[str, Any]) -> Outcome:
        directory = Path(layout.run_dir(ctx.root, ctx.run_id)) / "snapshots" / SNAPSHOT_DIR
        ctx.data["snapshot"] = snapshot.take(ctx.root, directory, ctx.data["files"], now_ms=ctx.now)
        ctx.data["stage"] = "fixing"
        threads = thread_by_id(record)
        labels = record["classifications"]
        issues = [
            {
                "id": thread_id,
                "file": threads[thread_id].get("path"),
                "line": threads[thread_id].get("line") or threads[thread_id].get("original_line"),
                "description": thread_text(threads[thread_id]),
                "suggestion": labels[thread_id].get("suggestion") or labels[thread_id]["reason"],
            }
            for thread_id in ctx.data["threads"]
        ]
        task = fixer_task(ctx.state, record["pr"], issues)
        call = Call(FIXER_AGENT, f"Fix {len(issues)} review thread(s)", task, "fixer")
        return Dispatch((call,), "fix the review threads")

    def _after_fix(self, ctx: PhaseContext, record: dict[str, Any]) -> Outcome:
        document = ctx.document(FIXER_AGENT)
        results = {str(item["issue_id"]): item for item in (document or {}).get("results") or []}
        ctx.data["results"] = results
        try:
            changed = snapshot.changed_since(ctx.data["snapshot"])
        except FixloopError as error:
            ctx.warn(error.code, f"Cannot compare with the snapshot: {error.message}")
            changed = sorted(str(path) for path in (document or {}).get("files_modified") or [])
        succeeded = [t for t in ctx.data["threads"] if (results.get(t) or {}).get("status") == "succeeded"]
        if not changed or not succeeded:
            restored = snapshot.rollback(ctx.data["snapshot"]) if changed else []
            why = "the fixer gave no valid answer" if document is None else "the fixer changed no file"
            return self._end_unfixed(ctx, record, why, restored)
        ctx.data.update(stage="verifying", changed=changed, succeeded=succeeded)
        ctx.state["changed_files"] = changed
        return Work(VERIFICATION, {"slot": "pr_fix"})

    def _after_verification(self, ctx: PhaseContext, record: dict[str, Any]) -> Outcome:
        before = ctx.work_result(f"{VERIFICATION}:baseline")
        after = ctx.work_result(f"{VERIFICATION}:verifying") or {}
        broken = regressions(before, after)
        if broken:
            restored = snapshot.rollback(ctx.data["snapshot"])
            why = f"verification failed after the fix ({', '.join(broken)}); the change was rolled back"
            ctx.warn(
                "FIX_ROLLED_BACK", f"The fix of the review threads was rolled back: {why}.", files=restored
            )
            return self._end_unfixed(ctx, record, why, restored, rolled_back=True)
        still = [name for name in STEP_NAMES if (after.get(name) or {}).get("status") in FAILED_STATUSES]
        if still:
            ctx.warn(
                "VERIFICATION_ALREADY_FAILING",
                f"{', '.join(still)} failed before the fix as after it; the fix is committed anyway.",
            )
        threads = thread_by_id(record)
        message = commit_message(
            record["pr"].get("number"), [threads[t] for t in ctx.data["succeeded"]], ctx.run_id
        )
        ctx.data["stage"] = "committing"
        return Work(performers.COMMIT, {"files": ctx.data["changed"], "message": message})

    def _after_commit(self, ctx: PhaseContext, record: dict[str, Any]) -> Outcome:
        result = ctx.work_result(performers.COMMIT) or {}
        changed: list[str] = ctx.data["changed"]
        ctx.data["files_changed"] = changed
        succeeded: list[str] = ctx.data["succeeded"]
        fixes = self._unfixed(ctx, [t for t in ctx.data["threads"] if t not in succeeded], "")
        if not result.get("ok"):
            ctx.warn("COMMIT_FAILED", f"The fix was not committed: {result.get('message')}", files=changed)
            for thread_id in succeeded:
                fixes[thread_id] = {
                    "status": "uncommitted",
                    "reason": f"the change is in the working tree, not committed: {result.get('message')}",
                    "files": self._files(ctx, thread_id),
                }
            record["fixes"] = fixes
            return PhaseDone("partial", {"fixed": 0, "uncommitted": len(succeeded), "files": changed})
        sha = str(result["sha"])
        record["commit"] = {
            "sha": sha,
            "parent": result.get("parent"),
            "files": changed,
            "threads": succeeded,
        }
        for thread_id in succeeded:
            fixes[thread_id] = {"status": "committed", "commit": sha, "files": self._files(ctx, thread_id)}
        record["fixes"] = fixes
        ctx.data["errors_fixed"] = len(succeeded)  # the run's count of what it fixed: here, threads
        ctx.data["final_lines"] = [
            f"Committed {sha[:7]}: fixes {len(succeeded)} of {len(ctx.data['threads'])} thread(s) "
            f"({', '.join(changed)}); push the branch (`git push`) so the replies' commit is on GitHub."
        ]
        status = "success" if len(succeeded) == len(ctx.data["threads"]) else "partial"
        return PhaseDone(status, {"fixed": len(succeeded), "commit": sha, "files": changed})

    # ---- helpers ------------------------------------------------------------------------------------

    def _files(self, ctx: PhaseContext, thread_id: str) -> list[str]:
        claimed = set((ctx.data["results"].get(thread_id) or {}).get("files") or [])
        changed: list[str] = ctx.data["changed"]
        return sorted(claimed & set(changed)) or changed

    def _unfixed(self, ctx: PhaseContext, ids: list[str], why: str) -> dict[str, Any]:
        results = ctx.data.get("results") or {}
        fixes: dict[str, Any] = {}
        for thread_id in ids:
            item = results.get(thread_id) or {}
            status = str(item.get("status") or "failed")
            reason = str(item.get("reason") or why or "the fixer did not fix it")
            fixes[thread_id] = {"status": "failed" if status == "succeeded" else status, "reason": reason}
        return fixes

    def _end_unfixed(
        self,
        ctx: PhaseContext,
        record: dict[str, Any],
        why: str,
        restored: list[str],
        rolled_back: bool = False,
    ) -> Outcome:
        ids: list[str] = ctx.data["threads"]
        fixes = self._unfixed(ctx, ids, why)
        if rolled_back:
            for thread_id in ctx.data.get("succeeded") or []:
                fixes[thread_id] = {"status": "rolled_back", "reason": why}
        record["fixes"] = fixes
        ctx.state["changed_files"] = []
        ctx.data["stage"] = "done"
        return PhaseDone("partial", {"fixed": 0, "fix_threads": len(ids), "restored": restored})
