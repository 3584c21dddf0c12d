"""The usual test, lint and typecheck commands of a project, found from its files.

Only files are read here; nothing is run. What is found is a proposal: like a configured command, it runs
only once the user approves it (runs.trust).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fixloop.core import jsoncodec

MAX_READ_BYTES = 1_000_000
NPM_DEFAULT_TEST = 'echo "Error: no test specified" && exit 1'
MAX_TEST_FILES_READ = 20


@dataclass(frozen=True)
class Detected:
    command: str
    source: str  # what it was found from, for the user: "package.json scripts.test"


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_READ_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _sections(text: str | None) -> dict[str, list[str]]:
    """The keys of each `[section]` of an INI or TOML file (enough to see which tools it configures;
    Python 3.10 has no TOML parser)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line.strip("[] ").strip(), [])
        elif current is not None and "=" in line and not line.startswith(("#", ";")):
            current.append(line.split("=", 1)[0].strip())
    return sections


def _tool(root: Path, name: str) -> str:
    """`name` from the project's own virtual environment when it has one, else from PATH."""
    for venv in (".venv", "venv"):
        if (root / venv / "bin" / name).is_file():
            return f"{venv}/bin/{name}"
    return "python3" if name == "python" else name


def _python(root: Path) -> dict[str, Detected]:
    tools = {
        name.removeprefix("tool.").split(".")[0]: keys
        for name, keys in _sections(_read(root / "pyproject.toml")).items()
        if name.startswith("tool.")
    }
    found: dict[str, Detected] = {}
    tests = _python_tests(root, tools)
    if tests:
        found["tests"] = tests
    ruff_source = next(
        (
            source
            for source, present in (
                ("pyproject.toml [tool.ruff]", "ruff" in tools),
                ("ruff.toml", (root / "ruff.toml").is_file()),
                (".ruff.toml", (root / ".ruff.toml").is_file()),
            )
            if present
        ),
        None,
    )
    if ruff_source:
        found["lint"] = Detected(f"{_tool(root, 'ruff')} check .", ruff_source)
    mypy_source = next(
        (
            source
            for source, present in (
                ("pyproject.toml [tool.mypy]", "mypy" in tools),
                ("mypy.ini", (root / "mypy.ini").is_file()),
                (".mypy.ini", (root / ".mypy.ini").is_file()),
            )
            if present
        ),
        None,
    )
    if mypy_source:
        ini = _sections(_read(root / "mypy.ini")).get("mypy", [])
        files = "" if "files" in tools.get("mypy", []) or "files" in ini else " ."
        found["typecheck"] = Detected(f"{_tool(root, 'mypy')}{files}", mypy_source)
    return found


def _python_tests(root: Path, tools: dict[str, list[str]]) -> Detected | None:
    """pytest where the project configures or depends on it; else unittest where its tox.ini, setup.cfg
    or Makefile runs it, or its test files use it; else pytest when it has test files."""
    python = _tool(root, "python")
    setup_cfg, tox_ini = _sections(_read(root / "setup.cfg")), _sections(_read(root / "tox.ini"))
    pytest_source = next(
        (
            source
            for source, present in (
                ("pyproject.toml [tool.pytest.ini_options]", "pytest" in tools),
                ("pytest.ini", (root / "pytest.ini").is_file()),
                ("conftest.py", (root / "conftest.py").is_file()),
                ("tests/conftest.py", (root / "tests" / "conftest.py").is_file()),
                ("setup.cfg [tool:pytest]", "tool:pytest" in setup_cfg),
                ("tox.ini [pytest]", "pytest" in tox_ini),
            )
            if present
        ),
        None,
    )
    if pytest_source:
        return Detected(f"{python} -m pytest -q", pytest_source)
    unittest_source = _unittest_configured(root)
    if unittest_source:
        return Detected(unittest_source[0], unittest_source[1])
    test_files = _python_test_files(root)
    if not test_files:
        return None
    where = "tests/test_*.py" if test_files[0].parent.name == "tests" else "test*.py"
    uses_pytest = _pytest_source(root)
    if uses_pytest:
        return Detected(f"{python} -m pytest -q", f"{where} ({uses_pytest})")
    texts = [_read(path) or "" for path in test_files[:MAX_TEST_FILES_READ]]
    if any("unittest" in text for text in texts) and not any("import pytest" in text for text in texts):
        return Detected(_unittest_command(root, python), f"{where} (unittest, and pytest is not installed)")
    return Detected(f"{python} -m pytest -q", where)


def _unittest_configured(root: Path) -> tuple[str, str] | None:
    """A unittest command the project's tox.ini, setup.cfg or Makefile gives, and where it was found."""
    python = _tool(root, "python")
    for line in (_read(root / "tox.ini") or "").splitlines():
        words = line.strip().removeprefix("commands").strip(" =").split()
        if words[1:3] == ["-m", "unittest"] and (words[0].startswith("python") or words[0] == "{envpython}"):
            arguments = [word for word in words[3:] if "{" not in word]  # tox's {posargs} and the like
            return " ".join([python, "-m", "unittest", *arguments]), "tox.ini commands (python -m unittest)"
    if "test_suite" in _sections(_read(root / "setup.cfg")).get("options", []):
        return _unittest_command(root, python), "setup.cfg [options] test_suite"
    makefile = _read(root / "Makefile") or ""
    target = re.search(r"^test:.*\n((?:\t.*\n?)+)", makefile, re.MULTILINE)
    if target and "-m unittest" in target.group(1):
        return "make test", "Makefile test: (python -m unittest)"
    return None


def _python_test_files(root: Path) -> list[Path]:
    """test*.py files where unittest's discovery (or pytest's) finds them: the project's top folder and
    tests/."""
    found: list[Path] = []
    for folder in (root / "tests", root / "test", root):
        if folder.is_dir():
            found += sorted(path for path in folder.glob("test*.py") if path.is_file())
        if len(found) >= MAX_TEST_FILES_READ:
            break
    return found


def _pytest_source(root: Path) -> str | None:
    """Where the project shows it uses pytest: its dependencies, or pytest in its virtual environment."""
    for name in (
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
        "requirements-dev.txt",
        "requirements.txt",
        "requirements-test.txt",
        "setup.py",
    ):
        if re.search(r"\bpytest\b", _read(root / name) or ""):
            return f"{name} names pytest"
    for venv in (".venv", "venv"):
        if any((root / venv / "lib").glob("python3*/site-packages/pytest")):
            return f"pytest is installed in {venv}"
    return None


def _unittest_command(root: Path, python: str) -> str:
    """`python -m unittest` finds tests in packages under the top folder; a tests/ folder that is not a
    package needs `discover -s tests`."""
    tests = root / "tests"
    if tests.is_dir() and not (tests / "__init__.py").is_file() and any(tests.glob("test*.py")):
        return f"{python} -m unittest discover -s tests"
    return f"{python} -m unittest"


def _node(root: Path) -> dict[str, Detected]:
    text = _read(root / "package.json")
    if text is None:
        return {}
    try:
        package = jsoncodec.loads_document(text)
    except ValueError:
        return {}
    scripts = package.get("scripts") if isinstance(package, dict) else None
    if not isinstance(scripts, dict):
        scripts = {}
    runner = (
        "pnpm" if (root / "pnpm-lock.yaml").is_file() else "yarn" if (root / "yarn.lock").is_file() else "npm"
    )
    found: dict[str, Detected] = {}
    test = scripts.get("test")
    if isinstance(test, str) and test.strip() and test.strip() != NPM_DEFAULT_TEST:
        found["tests"] = Detected(f"{runner} test", "package.json scripts.test")
    else:
        direct = _node_test_runner(root, package)
        if direct:
            found["tests"] = direct
    if isinstance(scripts.get("lint"), str):
        found["lint"] = Detected(f"{runner} run lint", "package.json scripts.lint")
    for name in ("typecheck", "type-check", "tsc"):
        if isinstance(scripts.get(name), str):
            found["typecheck"] = Detected(f"{runner} run {name}", f"package.json scripts.{name}")
            break
    else:
        # tsc only where the project has it: `npx --no-install tsc` fails in a project without TypeScript
        if (root / "tsconfig.json").is_file() and _depends_on(package, "typescript"):
            found["typecheck"] = Detected("npx --no-install tsc --noEmit", "tsconfig.json")
    return found


def _node_test_runner(root: Path, package: object) -> Detected | None:
    """A test runner the project depends on but no script starts: run it with the project's own copy."""
    folder = next((name for name in ("test", "tests") if (root / name).is_dir()), "test")
    for name, command in (
        ("vitest", "npx --no-install vitest run"),
        ("jest", "npx --no-install jest"),
        ("tap", "npx --no-install tap"),
        ("tape", f"npx --no-install tape '{folder}/**/*.js'"),
    ):
        if _depends_on(package, name):
            return Detected(command, f"package.json depends on {name}")
    return None


def _depends_on(package: object, name: str) -> bool:
    if not isinstance(package, dict):
        return False
    groups = (package.get(key) for key in ("dependencies", "devDependencies"))
    return any(isinstance(group, dict) and name in group for group in groups)


def _go(root: Path) -> dict[str, Detected]:
    if not (root / "go.mod").is_file():
        return {}
    return {"tests": Detected("go test ./...", "go.mod"), "lint": Detected("go vet ./...", "go.mod")}


def _rust(root: Path) -> dict[str, Detected]:
    if not (root / "Cargo.toml").is_file():
        return {}
    return {"tests": Detected("cargo test", "Cargo.toml"), "typecheck": Detected("cargo check", "Cargo.toml")}


def detect_commands(root: Path) -> dict[str, Detected]:
    """tests / lint / typecheck -> the command found for it; per step, the first ecosystem that has one
    (Python, then Node, Go, Rust)."""
    found: dict[str, Detected] = {}
    for ecosystem in (_python, _node, _go, _rust):
        for step, detected in ecosystem(root).items():
            found.setdefault(step, detected)
    return {step: found[step] for step in ("tests", "lint", "typecheck") if step in found}
