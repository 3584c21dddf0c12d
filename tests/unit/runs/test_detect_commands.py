"""The usual commands of a project, found from its files."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from fixloop.failures import parse
from fixloop.runs.detect_commands import NPM_DEFAULT_TEST, Detected, detect_commands

RUNNERS = Path(__file__).resolve().parents[2] / "fixtures" / "runners"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_python_project_with_its_tools_configured(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n\n'
            "[tool.ruff]\nline-length = 100\n\n[tool.mypy]\nstrict = true\n",
            ".venv/bin/python": "",
            ".venv/bin/ruff": "",
        },
    )
    assert detect_commands(root) == {
        "tests": Detected(".venv/bin/python -m pytest -q", "pyproject.toml [tool.pytest.ini_options]"),
        "lint": Detected(".venv/bin/ruff check .", "pyproject.toml [tool.ruff]"),
        "typecheck": Detected("mypy .", "pyproject.toml [tool.mypy]"),
    }


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"tests/test_a.py": ""}, Detected("python3 -m pytest -q", "tests/test_*.py")),
        ({"pytest.ini": "[pytest]\n"}, Detected("python3 -m pytest -q", "pytest.ini")),
        (
            {"setup.cfg": "[tool:pytest]\naddopts = -q\n"},
            Detected("python3 -m pytest -q", "setup.cfg [tool:pytest]"),
        ),
        ({"tests/conftest.py": ""}, Detected("python3 -m pytest -q", "tests/conftest.py")),
    ],
)
def test_pytest_is_found_from_any_of_its_usual_files(
    tmp_path: Path, files: dict[str, str], expected: Detected
) -> None:
    assert detect_commands(write(tmp_path, files)) == {"tests": expected}


def test_mypy_with_its_own_file_list_gets_no_path(tmp_path: Path) -> None:
    root = write(tmp_path, {"mypy.ini": "[mypy]\nfiles = src\n"})
    assert detect_commands(root) == {"typecheck": Detected("mypy", "mypy.ini")}


@pytest.mark.parametrize(
    ("lockfile", "runner"), [(None, "npm"), ("yarn.lock", "yarn"), ("pnpm-lock.yaml", "pnpm")]
)
def test_package_scripts_with_the_project_s_package_manager(
    tmp_path: Path, lockfile: str | None, runner: str
) -> None:
    scripts = {"test": "vitest run", "lint": "eslint .", "type-check": "tsc --noEmit"}
    files = {"package.json": json.dumps({"scripts": scripts})}
    if lockfile:
        files[lockfile] = ""
    assert detect_commands(write(tmp_path, files)) == {
        "tests": Detected(f"{runner} test", "package.json scripts.test"),
        "lint": Detected(f"{runner} run lint", "package.json scripts.lint"),
        "typecheck": Detected(f"{runner} run type-check", "package.json scripts.type-check"),
    }


def test_npm_s_placeholder_test_script_is_not_a_test_command(tmp_path: Path) -> None:
    package = {"scripts": {"test": NPM_DEFAULT_TEST}, "devDependencies": {"typescript": "^5.6.0"}}
    root = write(tmp_path, {"package.json": json.dumps(package), "tsconfig.json": "{}"})
    assert detect_commands(root) == {"typecheck": Detected("npx --no-install tsc --noEmit", "tsconfig.json")}


def test_a_tsconfig_without_typescript_in_the_dependencies_is_no_typecheck(tmp_path: Path) -> None:
    package = {"scripts": {"test": "vitest run"}, "devDependencies": {"vitest": "^2.1.0"}}
    root = write(tmp_path, {"package.json": json.dumps(package), "tsconfig.json": "{}"})
    assert detect_commands(root) == {"tests": Detected("npm test", "package.json scripts.test")}


def test_go_and_rust(tmp_path: Path) -> None:
    go = write(tmp_path / "go", {"go.mod": "module x\n"})
    assert detect_commands(go) == {
        "tests": Detected("go test ./...", "go.mod"),
        "lint": Detected("go vet ./...", "go.mod"),
    }
    rust = write(tmp_path / "rust", {"Cargo.toml": "[package]\n"})
    assert detect_commands(rust) == {
        "tests": Detected("cargo test", "Cargo.toml"),
        "typecheck": Detected("cargo check", "Cargo.toml"),
    }


def test_each_step_takes_the_first_ecosystem_that_has_it(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "tests/test_a.py": "",
            "package.json": json.dumps({"scripts": {"test": "jest", "lint": "eslint ."}}),
        },
    )
    assert detect_commands(root) == {
        "tests": Detected("python3 -m pytest -q", "tests/test_*.py"),
        "lint": Detected("npm run lint", "package.json scripts.lint"),
    }


@pytest.mark.parametrize("broken", ["{not json", json.dumps(["a list"]), json.dumps({"scripts": "x"})])
def test_unreadable_files_find_nothing(tmp_path: Path, broken: str) -> None:
    assert detect_commands(write(tmp_path, {"package.json": broken})) == {}


def test_an_empty_project_has_nothing(tmp_path: Path) -> None:
    assert detect_commands(tmp_path) == {}


UNITTEST_CASE = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {
                "tox.ini": "[testenv]\ndeps = coverage\n"
                "commands = python -m unittest discover -s tests {posargs}\n"
            },
            Detected("python3 -m unittest discover -s tests", "tox.ini commands (python -m unittest)"),
        ),
        (
            {"tox.ini": "[testenv]\ncommands =\n    {envpython} -m unittest -v\n"},
            Detected("python3 -m unittest -v", "tox.ini commands (python -m unittest)"),
        ),
        (
            {"setup.cfg": "[metadata]\nname = x\n\n[options]\ntest_suite = tests\n"},
            Detected("python3 -m unittest", "setup.cfg [options] test_suite"),
        ),
        (
            {"Makefile": "lint:\n\truff check .\n\ntest:\n\tpython3 -m unittest -v\n"},
            Detected("make test", "Makefile test: (python -m unittest)"),
        ),
        (
            {"tests/__init__.py": "", "tests/test_a.py": UNITTEST_CASE},
            Detected("python3 -m unittest", "tests/test_*.py (unittest, and pytest is not installed)"),
        ),
        (
            {"tests/test_a.py": UNITTEST_CASE},
            Detected(
                "python3 -m unittest discover -s tests",
                "tests/test_*.py (unittest, and pytest is not installed)",
            ),
        ),
        (
            {"test_a.py": UNITTEST_CASE},
            Detected("python3 -m unittest", "test*.py (unittest, and pytest is not installed)"),
        ),
    ],
)
def test_unittest_is_found_where_the_project_runs_it(
    tmp_path: Path, files: dict[str, str], expected: Detected
) -> None:
    assert detect_commands(write(tmp_path, files)) == {"tests": expected}


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"tests/test_a.py": UNITTEST_CASE, "requirements-dev.txt": "pytest>=8\n"},
            Detected("python3 -m pytest -q", "tests/test_*.py (requirements-dev.txt names pytest)"),
        ),
        (
            {
                "tests/test_a.py": UNITTEST_CASE,
                ".venv/bin/python": "",
                ".venv/lib/python3.12/site-packages/pytest/__init__.py": "",
            },
            Detected(".venv/bin/python -m pytest -q", "tests/test_*.py (pytest is installed in .venv)"),
        ),
        (
            {"tests/test_a.py": "import unittest\n\nimport pytest\n"},
            Detected("python3 -m pytest -q", "tests/test_*.py"),
        ),
        (
            {"tests/test_a.py": UNITTEST_CASE, "pytest.ini": "[pytest]\n"},
            Detected("python3 -m pytest -q", "pytest.ini"),
        ),
    ],
)
def test_unittest_tests_run_with_pytest_where_the_project_has_pytest(
    tmp_path: Path, files: dict[str, str], expected: Detected
) -> None:
    assert detect_commands(write(tmp_path, files)) == {"tests": expected}


@pytest.mark.parametrize(
    ("dependency", "folder", "command"),
    [
        ("tape", "test", "npx --no-install tape 'test/**/*.js'"),
        ("tape", "tests", "npx --no-install tape 'tests/**/*.js'"),
        ("tap", "test", "npx --no-install tap"),
        ("jest", "test", "npx --no-install jest"),
        ("vitest", "test", "npx --no-install vitest run"),
    ],
)
def test_a_javascript_runner_no_script_starts(
    tmp_path: Path, dependency: str, folder: str, command: str
) -> None:
    package = {"scripts": {"test": NPM_DEFAULT_TEST}, "devDependencies": {dependency: "*"}}
    root = write(tmp_path, {"package.json": json.dumps(package), f"{folder}/a.js": ""})
    assert detect_commands(root) == {"tests": Detected(command, f"package.json depends on {dependency}")}


def test_a_real_unittest_project_gets_a_command_that_runs_its_tests(tmp_path: Path) -> None:
    """The sample project of the parser fixtures: the detected command runs and its failures are read."""
    project = tmp_path / "ledger"
    shutil.copytree(RUNNERS / "unittest_ledger", project, ignore=shutil.ignore_patterns("__pycache__"))
    detected = detect_commands(project)["tests"]
    assert detected == Detected(
        "python3 -m unittest", "tests/test_*.py (unittest, and pytest is not installed)"
    )
    done = subprocess.run(
        shlex.split(detected.command), cwd=project, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    parsed = parse(done.stderr)
    assert parsed.runner == "unittest"
    assert len(parsed.failures) == 10
    assert "tests.test_amounts.BalanceTest.test_sums_all_entries" in {f.test_id for f in parsed.failures}
