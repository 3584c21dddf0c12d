"""`fixloop start COMMAND`: start the run of a slash command from the words the user typed.

A command's `!` line runs this with no arguments of the user's in it: the UserPromptSubmit hook stored the
prompt as typed (`.claude/fixloop/sessions/<session>.prompt`), and it is read here, once, and parsed
without a shell (runs.typed_command). What the workflow starts on (paths, a PR, a CI run, a plan) is kept
in the run's `inputs`; the engine's phases check it.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.runs import reviewed
from fixloop.runs.creation import start_run
from fixloop.runs.interrupted import end_interrupted_runs
from fixloop.runs.lifecycle import SESSION_ENV, Clock
from fixloop.runs.review_base import ReviewBase, automatic_base, since_base
from fixloop.runs.typed_command import TypedCommand, parse_typed_command
from fixloop.store import gitfiles, layout

ATTENDED_ENV = "CLAUDE_CODE_SESSION_ATTENDED"
MAX_PROMPT_BYTES = 512 * 1024


def prompt_path(root: Path, session: str) -> Path:
    return Path(layout.prompt_path(root, session))


def take_prompt(root: Path, session: str) -> str:
    """The prompt the UserPromptSubmit hook stored for `session`; read once (the file is removed)."""
    path = prompt_path(root, session)
    try:
        raw = path.read_bytes()[: MAX_PROMPT_BYTES + 1]
    except FileNotFoundError:
        raise FixloopError(
            "ARGUMENTS_UNAVAILABLE",
            "the words of this command were not stored by fixloop's UserPromptSubmit hook "
            "(are the plugin's hooks enabled?).",
            path=str(path),
        ) from None
    path.unlink(missing_ok=True)
    try:
        document = json.loads(raw.decode("utf-8"))
        prompt = document["prompt"]
    except (ValueError, KeyError, TypeError):
        raise FixloopError(
            "ARGUMENTS_UNAVAILABLE", "The stored command is unreadable.", path=str(path)
        ) from None
    if not isinstance(prompt, str):
        raise FixloopError("ARGUMENTS_UNAVAILABLE", "The stored command is unreadable.", path=str(path))
    return prompt


def _review_files(root: Path, typed: TypedCommand) -> tuple[list[str] | None, ReviewBase | None]:
    """(named files, git base): the paths the user named, or the git changes since --since REF, else since
    the branch's last review (runs.review_base)."""
    try:
        words = shlex.split(typed.text)
    except ValueError:
        words = typed.text.split()
    since = typed.options.get("since")
    if words:
        if since is not None:
            raise FixloopError(
                "CONFLICTING_ARGUMENTS",
                "Give either paths to review or --since REF, not both.",
                arguments=["--since", "paths"],
            )
        missing = [word for word in words if not (root / word).exists()]
        if missing:
            raise FixloopError(
                "PATH_NOT_FOUND",
                f"No such file or folder in the project: {', '.join(missing)}.",
                received=missing,
            )
        return [str(path) for word in words for path in _files_under(root, word)], None
    if not gitfiles.is_repository(root):
        raise FixloopError(
            "NOT_A_GIT_REPOSITORY",
            f"{root} is not a git repository, so there are no changes to review. Name the files instead: "
            "/fixloop:review path/to/file.py path/to/folder",
            project=str(root),
        )
    return None, since_base(root, str(since)) if since is not None else automatic_base(root)


def _files_under(root: Path, word: str) -> list[str]:
    target = root / word
    if target.is_dir():
        found = (path for path in target.rglob("*") if path.is_file() and ".git" not in path.parts)
        return sorted(str(path.relative_to(root)) for path in found)
    return [word]


def _inputs(typed: TypedCommand) -> dict[str, Any]:
    if "pr" in typed.options and typed.workflow != "review":
        raise FixloopError(
            "UNKNOWN_ARGUMENT",
            f"--pr publishes a review: /fixloop:review --pr [N]; /fixloop:{typed.command} takes no --pr.",
            received="--pr",
        )
    if typed.workflow == "review":
        # --pr [N]: after the loop, the engine posts the remaining findings on pull request N ("" = the
        # current branch's), through gh (workflows.publish).
        return {"publish_pr": typed.options["pr"]} if "pr" in typed.options else {}
    if typed.workflow == "pr-review":
        return {"pr": typed.text.strip()}
    if typed.workflow == "ci-job":
        options = typed.options
        return {"run": typed.text.strip(), "log_file": options.get("log_file"), "job": options.get("job")}
    if typed.workflow == "execute-plan":
        return {"plan": typed.text.strip()}
    return {}


def start_command(
    root: Path, command: str, environ: Mapping[str, str] | None = None, clock: Clock | None = None
) -> dict[str, Any]:
    """Start the run of `/fixloop:<command>` typed in this Claude Code session; the run's description."""
    env = os.environ if environ is None else environ
    session = env.get(SESSION_ENV, "")
    if not session:
        raise FixloopError(
            "NO_SESSION",
            f"fixloop start runs inside a Claude Code command (${SESSION_ENV} is not set).",
        )
    prompt = take_prompt(root, session)
    typed = parse_typed_command(prompt, command)
    interrupted = end_interrupted_runs(root)  # before this run verifies anything: no edit left unchecked
    changed: list[str] | None = None
    base: ReviewBase | None = None
    if typed.workflow == "review":
        changed, base = _review_files(root, typed)
    result = start_run(
        typed.workflow,
        root=root,
        stack=typed.stack,
        phase=typed.options.get("phase"),
        dry_run=bool(typed.options.get("dry_run")),
        log=typed.options.get("log"),
        level=typed.level,
        config_file=typed.options.get("config"),
        command=prompt.strip(),
        changed_files=changed,
        git_base=base.diff_base if base is not None else None,
        review_base=base.to_json() if base is not None else None,
        claude_session_id=session,
        free_text=typed.text,
        interactive=env.get(ATTENDED_ENV) != "0",
        inputs=_inputs(typed),
        trust_config=bool(typed.options.get("trust_config")),
        no_gate=bool(typed.options.get("no_gate")),
        clock=clock,
    )
    state = dict(result["state"])
    if interrupted:
        state["interrupted_runs"] = interrupted
    if base is not None and base.branch is not None and base.head is not None:
        reviewed.note_started(root, str(state["run_id"]), base.branch, base.head)
    return state


def started_text(state: Mapping[str, Any]) -> str:
    """What the coordinator reads first: the run, its workflow and phases."""
    phases = list(state.get("phases") or [])
    span = f"phase {phases[0]}" if len(phases) == 1 else f"phases {','.join(str(p) for p in phases)}"
    stack = f" ({state['stack']})" if state.get("stack") else ""
    dry = ", dry run" if state.get("dry_run") else ""
    text = f"fixloop run {state['run_id']} started: {state['workflow']}{stack}, {span}{dry}."
    base = state.get("review_base")
    if isinstance(base, dict) and base.get("message"):
        text += f" {base['message']}"
    left_out = state.get("files_left_out")
    if isinstance(left_out, list) and left_out:
        text += f" {len(left_out)} changed file(s) left out by review_include/review_exclude."
    unreadable = state.get("files_not_reviewable")
    if isinstance(unreadable, list) and unreadable:
        names = ", ".join(str(item.get("file")) for item in unreadable[:20] if isinstance(item, dict))
        text += f" Not reviewed ({len(unreadable)}, names not UTF-8): {names}."
    for note in state.get("interrupted_runs") or []:
        text += f"\nWarning {note['code']}: {note['message']}"
    return text
