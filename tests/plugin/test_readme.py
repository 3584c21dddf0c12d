"""README.md says what the code does: every command with its real phases, every config key, the real log
file names, and links that lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixloop.contracts.coordinator import LoopConfig, RoleModels
from fixloop.runs.phases import WORKFLOW_PHASES
from fixloop.runs.typed_command import COMMANDS
from fixloop.store.logwriter import log_file_paths

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _command_rows() -> dict[str, str]:
    """command -> the phases cell of its row in the commands table."""
    rows: dict[str, str] = {}
    for line in README.splitlines():
        match = re.match(r"^\| `/fixloop:([a-z0-9-]+)[^`]*` \|.*\|([^|]*)\|$", line)
        if match:
            rows[match.group(1)] = match.group(2).strip()
    return rows


def test_every_command_of_the_plugin_is_in_the_commands_table() -> None:
    on_disk = {path.stem for path in (ROOT / "commands").glob("*.md")}
    assert set(_command_rows()) == on_disk


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_row_gives_its_workflows_real_phases(command: str) -> None:
    workflow, _stack = COMMANDS[command]
    last = len(WORKFLOW_PHASES[workflow]) - 1
    expected = "0" if last == 0 else f"0\u2013{last}"  # an en dash, as the table writes ranges
    assert _command_rows()[command] == expected


@pytest.mark.parametrize("key", sorted(LoopConfig.model_fields))
def test_every_config_key_is_documented(key: str) -> None:
    assert f"`{key}`" in README


@pytest.mark.parametrize("role", sorted(RoleModels.model_fields))
def test_every_role_of_models_is_documented(role: str) -> None:
    assert f"`{role}`" in README


def test_the_log_file_names_are_the_ones_the_engine_writes() -> None:
    pattern = "<YYYY-MM-DD_HHMMSS>_<identifier>_<run_id>"
    assert f".claude/logs/fixloop/<workflow>/{pattern}.jsonl" in README
    jsonl, text = log_file_paths(Path("/p/.claude/logs/fixloop/bugfix"), "backend", "a1b2c3d4", 1733495452)
    assert jsonl.name == "2024-12-06_143052_backend_a1b2c3d4.jsonl"
    assert text.name == "2024-12-06_143052_backend_a1b2c3d4.log"


def test_every_relative_link_leads_to_a_file_of_the_repository() -> None:
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    relative = [t for t in targets if not re.match(r"^[a-z]+://", t)]
    assert relative
    assert [t for t in relative if not (ROOT / t).is_file()] == []


def test_the_test_command_is_what_ci_runs() -> None:
    assert "bash scripts/dev/test" in README
    assert "exec bash scripts/dev/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_install_line_is_a_placeholder_the_user_fills_in() -> None:
    assert "/plugin marketplace add OWNER/REPO" in README
    assert "fixloop/fixloop" not in README
