"""The engine's layers, enforced: each package imports only the packages below it.

    core        standard library only; no other fixloop package
    failures    core                                   (standard library only: test and CI output parsing)
    plans       core                                   (standard library only: written plans)
    github      core                                   (standard library only: GitHub through gh)
    store       core                                   (standard library only)
    contracts   core                                   (+ pydantic, jsonschema)
    runs        core, store, contracts, failures
    review      core, store, contracts, runs, failures
    workflows   core, store, contracts, runs, review, failures, plans, github
    report      everything above but cli and hookside
    hookside    core, store                            (standard library only: hooks start in milliseconds)
    cli         everything                             (+ click)

`hooks/*.py` import only hookside, core and store.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "scripts" / "lib" / "fixloop"
HOOKS = ROOT / "hooks"

ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "failures": {"core"},
    "plans": {"core"},
    "github": {"core"},
    "store": {"core"},
    "contracts": {"core"},
    "runs": {"core", "store", "contracts", "failures"},
    "review": {"core", "store", "contracts", "runs", "failures"},
    "workflows": {"core", "store", "contracts", "runs", "review", "failures", "plans", "github"},
    "report": {"core", "store", "contracts", "runs", "review", "workflows", "failures", "plans", "github"},
    "hookside": {"core", "store"},
    "cli": {
        "core",
        "store",
        "contracts",
        "runs",
        "review",
        "workflows",
        "report",
        "hookside",
        "failures",
        "plans",
        "github",
    },
}
STDLIB_ONLY = {"core", "store", "hookside", "failures", "plans", "github"}
THIRD_PARTY = {"contracts": {"pydantic", "jsonschema", "annotated_types"}, "cli": {"click"}}
TOP_LEVEL_MODULES = {"__init__", "__main__"}  # fixloop/__init__.py (the version) and python -m fixloop


def imported_modules(path: Path) -> list[str]:
    """Every module an `import` or `from ... import` in `path` names, at any depth (lazy imports too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "fixloop":  # a package, or the version in fixloop/__init__.py
                names.extend(
                    "fixloop" if alias.name == "__version__" else f"fixloop.{alias.name}"
                    for alias in node.names
                )
            else:
                names.append(node.module)
    return names


def fixloop_package(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "fixloop":
        return None
    return parts[1] if len(parts) > 1 else ""


def engine_files() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def package_of(path: Path) -> str:
    relative = path.relative_to(ENGINE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def test_every_engine_module_is_in_a_known_layer() -> None:
    unknown = sorted(
        str(path.relative_to(ENGINE))
        for path in engine_files()
        if package_of(path) not in ALLOWED and package_of(path) not in TOP_LEVEL_MODULES
    )
    assert unknown == []


@pytest.mark.parametrize("path", engine_files(), ids=lambda path: str(path.relative_to(ENGINE)))
def test_engine_imports_follow_the_layers(path: Path) -> None:
    package = package_of(path)
    if package in TOP_LEVEL_MODULES:
        return
    allowed = ALLOWED[package] | {package, ""}  # itself, and `fixloop` (the version)
    stdlib = set(sys.stdlib_module_names)
    wrong: list[str] = []
    for module in imported_modules(path):
        layer = fixloop_package(module)
        if layer is not None:
            if layer not in allowed:
                wrong.append(module)
            continue
        top = module.split(".")[0]
        if top in stdlib or top == "__future__":
            continue
        if package in STDLIB_ONLY or top not in THIRD_PARTY.get(package, set()):
            wrong.append(module)
    assert wrong == [], f"{package} may import only {sorted(ALLOWED[package])} (and its own modules)"


@pytest.mark.parametrize("path", sorted(HOOKS.glob("*.py")), ids=lambda path: path.name)
def test_hooks_import_only_hookside_core_and_store(path: Path) -> None:
    stdlib = set(sys.stdlib_module_names)
    wrong = [
        module
        for module in imported_modules(path)
        if (fixloop_package(module) not in (None, "core", "store", "hookside"))
        or (
            fixloop_package(module) is None
            and module.split(".")[0] not in stdlib | {"__future__", "bootstrap"}
        )
    ]
    assert wrong == []


def test_the_checker_sees_lazy_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f():\n    from fixloop.review import machine\n    import click\n", encoding="utf-8"
    )
    assert imported_modules(module) == ["fixloop.review", "click"]
