"""The real Claude Code CLI (the pinned version) accepts the plugin and the marketplace, strictly.

The binary: $FIXLOOP_CLAUDE_BIN, else tests/e2e/node_modules/.bin/claude (`npm ci --prefix tests/e2e`).
Without it the tests skip, except under CI (env CI set), where a missing binary is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "fixloop"


def claude_binary() -> Path:
    configured = os.environ.get("FIXLOOP_CLAUDE_BIN")
    binary = Path(configured) if configured else ROOT / "tests" / "e2e" / "node_modules" / ".bin" / "claude"
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    reason = (
        f"Claude Code CLI not found at {binary}: run `npm ci --prefix tests/e2e` "
        "or set FIXLOOP_CLAUDE_BIN to the claude binary"
    )
    if os.environ.get("CI"):
        pytest.fail(reason + " (CI is set, so this is a failure, not a skip)")
    pytest.skip(reason)


def validate(target: Path, tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    env = {
        **os.environ,
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    done = subprocess.run(
        [str(claude_binary()), "plugin", "validate", "--strict", "--json", str(target)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(
            f"validate printed no JSON (rc {done.returncode}): {done.stdout[:2000]} {done.stderr[:2000]}"
        )
    assert isinstance(report, dict)
    return done.returncode, report, done.stderr


def expected_components() -> dict[str, list[str]]:
    return {
        "agents": sorted(f"{PLUGIN}:{path.stem}" for path in (ROOT / "agents").glob("*.md")),
        "commands": sorted(f"{PLUGIN}:{path.stem}" for path in (ROOT / "commands").glob("*.md")),
        "skills": sorted(f"{PLUGIN}:{path.parent.name}" for path in (ROOT / "skills").glob("*/SKILL.md")),
    }


def test_plugin_manifest_validates_strictly_with_every_component(tmp_path: Path) -> None:
    rc, report, stderr = validate(ROOT / ".claude-plugin" / "plugin.json", tmp_path)
    assert rc == 0, json.dumps(report, indent=2) + stderr
    assert report["success"] is True and report["strict"] is True
    assert report["manifest"]["type"] == "plugin"
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    provides = report["provides"]
    # Claude Code names agents plugin:name (plugin:dir:name for agents in subfolders) from what it loaded.
    assert {
        kind: sorted(provides[kind]) for kind in ("agents", "commands", "skills")
    } == expected_components()


def test_marketplace_validates_strictly_and_lists_the_plugin_from_the_repo_root(tmp_path: Path) -> None:
    rc, report, stderr = validate(ROOT, tmp_path)
    assert rc == 0, json.dumps(report, indent=2) + stderr
    assert report["success"] is True
    assert report["manifest"]["type"] == "marketplace"
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert marketplace["name"] == PLUGIN
    [entry] = marketplace["plugins"]
    assert entry["name"] == plugin["name"] == PLUGIN
    assert entry["source"] == "./"
    assert entry["version"] == plugin["version"]
