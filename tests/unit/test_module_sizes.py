"""Small modules: no engine module over 400 lines, no hook script over 80."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE_LIMIT = 400
HOOK_LIMIT = 80


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_engine_module_is_over_the_limit() -> None:
    too_long = {
        str(path.relative_to(ROOT)): line_count(path)
        for path in sorted((ROOT / "scripts" / "lib" / "fixloop").rglob("*.py"))
        if line_count(path) > ENGINE_LIMIT
    }
    assert too_long == {}


def test_hook_scripts_are_adapters() -> None:
    too_long = {
        path.name: line_count(path)
        for path in sorted((ROOT / "hooks").glob("*.py"))
        if line_count(path) > HOOK_LIMIT
    }
    assert too_long == {}
