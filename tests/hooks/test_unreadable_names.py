"""A review started the way Claude Code starts it (UserPromptSubmit, the command's `fixloop start` line, the
coordinator's and a reviewer's SubagentStart) on a project with an untracked file whose name is not UTF-8:
the review goes on and names the file it leaves out."""

from __future__ import annotations

import json
import os
import subprocess

from hook_helpers import PLUGIN_ROOT, HookEnv
from test_next_protocol import answer_of
from test_user_prompt import prompt_payload

from fixloop.runs import trust

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def test_a_review_goes_on_past_a_file_name_that_is_not_utf8(hooks: HookEnv) -> None:
    project = hooks.project
    (project / ".claude").mkdir()
    (project / ".claude" / "fixloop.json").write_text(json.dumps({"test_command": "true"}))
    trust.approve(project, {"tests": "true"}, data=str(hooks.data))
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "project"]):
        subprocess.run([*GIT, *command], cwd=project, check=True)
    (project / "src" / "app.py").write_text("def f(x):\n    return eval(x)\n")
    with open(os.path.join(os.fsencode(project), b"src", b"bad\xff.py"), "wb") as handle:
        handle.write(b"import os\n")

    assert hooks.run("UserPromptSubmit", prompt_payload(hooks, "/fixloop:review")).returncode == 0
    started = subprocess.run(
        ["bash", str(PLUGIN_ROOT / "scripts" / "fixloop"), "start", "review"],
        capture_output=True,
        text=True,
        env=hooks.env,
        cwd=project,
        timeout=120,
        check=False,
    )
    assert started.returncode == 0, started.stderr
    assert "Not reviewed (1, names not UTF-8): src/bad\\xff.py." in started.stdout

    coordinator = answer_of(hooks.run("SubagentStart", hooks.subagent_start("fixloop:coordinator", "id-co")))
    first = coordinator["additionalContext"].splitlines()[0]
    assert first.endswith(
        "step 1: review round 1): call these 6 agents, all in ONE message, with run_in_background false:"
    )
    reviewer = answer_of(hooks.run("SubagentStart", hooks.subagent_start("fixloop:code-reviewer", "id-cr")))
    assert "src/app.py" in reviewer["additionalContext"]
    (run_dir,) = (project / ".claude" / "fixloop" / "runs").iterdir()
    state = json.loads((run_dir / "state.json").read_text())
    assert state["errors"] == []
    assert state["changed_files"] == ["src/app.py"]
    assert [item["file"] for item in state["files_not_reviewable"]] == ["src/bad\\xff.py"]
