"""The CI recipe (examples/github-actions/fixloop-review.yml, docs/ci.md): actionlint finds nothing in the
workflow, it does what docs/ci.md says, and its engine steps work against a finished review run.

actionlint comes with the dev tools (`pip install -e '.[dev]'`, scripts/dev/setup); missing, the lint test
is skipped on a developer machine and fails in CI (CI=true). It runs ShellCheck on the `run:` scripts when
`shellcheck` is on PATH.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers_reports import save_run
from helpers_review import two_rounds
from helpers_runs import git

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "github-actions" / "fixloop-review.yml"
DOC = ROOT / "docs" / "ci.md"
ENGINE = ROOT / "scripts" / "fixloop"


def actionlint() -> str:
    found = shutil.which("actionlint", path=os.pathsep.join([str(Path(sys.executable).parent), os.defpath]))
    if found is None:
        message = "actionlint is not installed: pip install -e '.[dev]' (scripts/dev/setup)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def lint(path: Path) -> subprocess.CompletedProcess[str]:
    command = [actionlint(), "-no-color", "-oneline", str(path)]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)


def workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return loaded


def steps() -> list[dict[str, Any]]:
    return list(workflow()["jobs"]["review"]["steps"])


def step(name_start: str) -> dict[str, Any]:
    (found,) = [item for item in steps() if str(item.get("name", "")).startswith(name_start)]
    return found


def test_actionlint_finds_nothing() -> None:
    result = lint(WORKFLOW)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_actionlint_would_see_a_mistake(tmp_path: Path) -> None:
    """The check above is not empty: the same workflow with an untrusted value in a script fails it."""
    broken = tmp_path / "broken.yml"
    text = WORKFLOW.read_text(encoding="utf-8").replace(
        '--since ${BASE_SHA}"', '--since ${{ github.event.pull_request.title }}"'
    )
    assert text != WORKFLOW.read_text(encoding="utf-8")
    broken.write_text(text, encoding="utf-8")
    result = lint(broken)
    assert result.returncode == 1
    assert "potentially untrusted" in result.stdout


def test_the_recipe() -> None:
    document = workflow()
    assert list(document[True]) == ["pull_request"]  # YAML 1.1 reads the key `on` as true
    assert document["permissions"]["security-events"] == "write"
    uses = [str(item.get("uses", "")).split("@")[0] for item in steps()]
    assert "github/codeql-action/upload-sarif" in uses
    installs = step("Install Claude Code")["run"]
    assert '"@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"' in installs
    plugin = step("Install the fixloop plugin")["run"]
    assert "claude plugin marketplace add" in plugin and "claude plugin install fixloop@fixloop" in plugin
    review = step("Review the pull request")
    assert review["run"].startswith('claude -p "/fixloop:review --dry-run --since ${BASE_SHA}"')
    assert review["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}"
    gate = step("SARIF report")
    assert "review report latest --format sarif --output fixloop.sarif --fail-on" in gate["run"]
    assert "if" not in gate  # the job fails here when a finding reaches the level
    upload = step("Upload the findings")
    assert upload["with"]["sarif_file"] == "fixloop.sarif"
    assert "!cancelled()" in upload["if"]  # uploaded even when the gate failed the job
    assert [item.get("name") for item in steps()].index(gate["name"]) < steps().index(upload)


def test_the_documentation_shows_this_workflow() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "examples/github-actions/fixloop-review.yml" in text
    for phrase in ("--fail-on", "review report latest", "upload-sarif", "run list", "ANTHROPIC_API_KEY"):
        assert phrase in text, phrase


def test_the_engine_steps_against_a_finished_review(tmp_path: Path) -> None:
    """Every step after the review, run as the workflow runs it (bash, the engine's launcher), in a project
    whose latest run is a dry-run review with a critical and a high finding left."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 100)))
    state = two_rounds().state
    state["review"]["outcome"] = {"status": "dry_run_complete", "termination_reason": None}
    save_run(project, state, "abcd1234", status="dry_run_complete", ended_ms=1_765_000_060_000, dry_run=True)
    env = {
        **os.environ,
        **workflow()["env"],
        "FIXLOOP": str(ENGINE),
        "FIXLOOP_PYTHON": sys.executable,
        "FIXLOOP_DATA": str(tmp_path / "data"),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    env.pop("CLAUDE_CODE_SESSION_ID", None)

    def run_step(name_start: str) -> subprocess.CompletedProcess[str]:
        script = step(name_start)["run"]
        return subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    checked = run_step("Check that the review ran to its end")
    assert checked.returncode == 0, checked
    assert '"run_id": "abcd1234"' in checked.stdout
    html = run_step("HTML report")
    assert html.returncode == 0, html
    assert (project / "fixloop-report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    gate = run_step("SARIF report")
    assert gate.returncode == 1, gate  # FL-002 (critical) and FL-004 (high) remain
    assert '"failed": true' in gate.stdout
    assert (project / "fixloop.sarif").is_file()

    save_run(project, {**state, "review": {}}, "bbbbbbbb", status="failed", started_ms=1_765_000_100_000)
    failed = run_step("Check that the review ran to its end")
    assert failed.returncode == 1
    assert "::error::The fixloop run ended failed" in failed.stdout


# ---- the sharded recipe: plan, review per shard, merge ----------------------------------------------

SHARDED = ROOT / "examples" / "github-actions" / "fixloop-review-sharded.yml"


def sharded_step(job: str, name_start: str) -> dict[str, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(SHARDED.read_text(encoding="utf-8"))
    (found,) = [s for s in loaded["jobs"][job]["steps"] if str(s.get("name", "")).startswith(name_start)]
    return dict(found)


def test_actionlint_finds_nothing_in_the_sharded_recipe() -> None:
    result = lint(SHARDED)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def run_script(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_sharded_recipe_plans_reviews_and_merges(tmp_path: Path) -> None:
    """The plan step on a pull request of 7 files (one deleted), the review step's arguments for each shard,
    and the merge step over two shard reports, each run as the workflow runs it."""
    loaded: dict[Any, Any] = yaml.safe_load(SHARDED.read_text(encoding="utf-8"))
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    (runner_temp / "fixloop").symlink_to(ROOT)
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "old.py").write_text("x = 1\n")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "base")
    base = git(project, "rev-parse", "HEAD").strip()
    for name in ("src/app.py", "src/db.py", "src/it's.py", "tests/test_app.py", "docs/a.md", "docs/b.md"):
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text("y = 2\n")
    (project / "old.py").unlink()
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "change")
    output = tmp_path / "github-output"
    env = {**loaded["env"], "MAX_FILES": "4", "RUNNER_TEMP": str(runner_temp), "BASE_SHA": base}
    env |= {
        "GITHUB_OUTPUT": str(output),
        "FIXLOOP_PYTHON": sys.executable,
        "FIXLOOP_DATA": str(tmp_path / "d"),
    }
    planned = run_script(sharded_step("plan", "Plan the shards")["run"], project, env)
    assert planned.returncode == 0, planned
    assert output.read_text() == 'matrix={"shard": [1, 2]}\n'
    plan = json.loads((project / "shards.json").read_text())
    assert [shard["files"] for shard in plan["shards"]] == [
        ["docs/a.md", "docs/b.md"],
        ["src/app.py", "src/db.py", "src/it's.py", "tests/test_app.py"],
    ]
    # The review step's first line gives the shard's arguments, which the command splits back to its files.
    first_line = sharded_step("review", "Review shard")["run"].split("\n")[0]
    for shard in plan["shards"]:
        shown = run_script(
            first_line + '\necho "${arguments}"', project, {**env, "SHARD": str(shard["shard"])}
        )
        assert shlex.split(shown.stdout.strip()) == shard["files"]

    # The merge step: two shard reports, a high finding left in one of them.
    merge_dir = tmp_path / "merge"
    merge_dir.mkdir()
    state = two_rounds().state
    from fixloop.report.render import render
    from fixloop.report.sarif import sarif

    report = render(state, "json")
    (merge_dir / "shard-1.json").write_text(json.dumps(report))
    (merge_dir / "shard-1.sarif").write_text(json.dumps(sarif(state)))
    clean = {**report, "remaining_issues": [], "introduced_issues": [], "fixed_issues": [], "run_id": "r2"}
    (merge_dir / "shard-2.json").write_text(json.dumps(clean))
    merge_script = sharded_step("merge", "Merge the shards")["run"]
    merged = run_script(merge_script, merge_dir, env)
    assert merged.returncode == 1, merged  # FAIL_ON high: a high finding remains
    answer = json.loads(merged.stdout)
    assert answer["status"] == "written" and answer["fail_on"]["failed"] is True
    document = json.loads((merge_dir / "fixloop-report.json").read_text())
    assert document["remaining_issues"] == sorted(
        report["remaining_issues"], key=lambda i: (i["file"], i["line"] or 0, i["id"])
    )
    assert json.loads((merge_dir / "fixloop.sarif").read_text())["runs"][0]["results"]
    clean_dir = tmp_path / "clean"
    clean_dir.mkdir()
    (clean_dir / "shard-2.json").write_text(json.dumps(clean))
    passing = run_script(merge_script, clean_dir, env)  # no SARIF logs given: an empty merged log
    assert passing.returncode == 0, passing
    assert json.loads(passing.stdout)["fail_on"] == {"level": "high", "failed": False, "findings": []}
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = run_script(merge_script, empty, env)
    assert nothing.returncode == 1 and "No shard reported" in nothing.stdout


def test_the_documentation_shows_the_sharded_recipe() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "examples/github-actions/fixloop-review-sharded.yml" in text
    for phrase in (
        "fixloop review shards --files-from",
        "fixloop review merge",
        "--sarif-output",
        "coverage",
    ):
        assert phrase in text, phrase
