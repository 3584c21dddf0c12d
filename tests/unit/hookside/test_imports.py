"""hookside imports only fixloop.core, fixloop.store, itself and the standard library; what loads at import
time stays light, because every fixloop subagent call starts a hook process on it."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from helpers_imports import NOT_IN_HOOKS, modules_loaded_by

HOOKSIDE = Path(__file__).resolve().parents[3] / "scripts" / "lib" / "fixloop" / "hookside"
MODULES = sorted(HOOKSIDE.glob("*.py"))
ALLOWED_FIXLOOP = ("fixloop.core", "fixloop.store", "fixloop.hookside")
# Standard modules a hook may not load when its module is imported (they may be imported where needed).
HEAVY_AT_IMPORT = {"json", "re", "pathlib", "typing", "collections", "dataclasses", "enum", "functools"}


def imports_of(tree: ast.AST) -> list[str]:
    """Every module an import statement in `tree` names, lazy ones too (relative ones resolved)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # inside fixloop/hookside/
                parent = ["fixloop", "hookside"][: 3 - node.level] if node.level <= 2 else []
                base = ".".join([*parent, base] if base else parent)
            names.extend(f"{base}.{alias.name}" for alias in node.names)
    return names


def runtime_top_level_imports(tree: ast.Module) -> list[str]:
    """The modules imported when the module itself is imported: not in a function, not under
    `if TYPE_CHECKING:`."""
    names: list[str] = []

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                    visit(block)
            elif isinstance(node, (ast.With, ast.ClassDef)):
                visit(node.body)

    visit(tree.body)
    return names


def allowed(module: str) -> bool:
    top = module.split(".")[0]
    if top == "fixloop":
        return any(module == p or module.startswith(f"{p}.") for p in ALLOWED_FIXLOOP)
    return top == "__future__" or top in sys.stdlib_module_names


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_the_package_is_there() -> None:
    assert {path.stem for path in MODULES} >= {
        "__init__",
        "agent_events",
        "calls",
        "context",
        "dispatch",
        "engine",
        "payload",
        "prompt",
        "replies",
        "results",
        "review_group",
        "session",
        "stop",
    }


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_a_module_imports_only_core_store_hookside_and_the_standard_library(path: Path) -> None:
    wrong = [module for module in imports_of(parse(path)) if not allowed(module)]
    assert wrong == [], f"{path.name} may import only {', '.join(ALLOWED_FIXLOOP)} and the standard library"


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_importing_a_module_imports_nothing_heavy(path: Path) -> None:
    heavy = [m for m in runtime_top_level_imports(parse(path)) if m.split(".")[0] in HEAVY_AT_IMPORT]
    assert heavy == []


@pytest.mark.parametrize(
    ("source", "expected", "ok"),
    [
        ("import click\n", ["click"], False),
        ("from fixloop.runs import lifecycle\n", ["fixloop.runs.lifecycle"], False),
        ("def f():\n    from fixloop import review\n", ["fixloop.review"], False),
        ("from ..contracts import reviewer\n", ["fixloop.contracts.reviewer"], False),
        ("import pydantic.main\n", ["pydantic.main"], False),
        ("from . import calls\n", ["fixloop.hookside.calls"], True),
        ("from ..store import ledger\n", ["fixloop.store.ledger"], True),
    ],
)
def test_the_checker_sees_every_kind_of_import(source: str, expected: list[str], ok: bool) -> None:
    found = imports_of(ast.parse(source))
    assert found == expected
    assert [allowed(module) for module in found] == [ok]


def test_the_checker_allows_what_hookside_may_use() -> None:
    source = "import os\nfrom fixloop.core import jsoncodec\nfrom fixloop.store.ledger import read\n"
    assert all(allowed(module) for module in imports_of(ast.parse(source)))


def test_the_top_level_check_skips_type_checking_blocks_and_functions() -> None:
    source = (
        "import os\nTYPE_CHECKING = False\nif TYPE_CHECKING:\n    from typing import Any\n"
        "def f():\n    import json\nclass C:\n    import enum\ntry:\n    import re\nexcept ImportError:\n"
        "    pass\n"
    )
    assert runtime_top_level_imports(ast.parse(source)) == ["os", "enum", "re"]


def test_importing_the_whole_package_loads_no_upper_layer_nor_heavy_module() -> None:
    code = "".join(f"import fixloop.hookside.{path.stem}\n" for path in MODULES if path.stem != "__init__")
    assert modules_loaded_by(code, NOT_IN_HOOKS) == []
