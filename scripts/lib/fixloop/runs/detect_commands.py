"""The usual test, lint and typecheck commands of a project, found from its files.

Only files are read here; nothing is run. What is found is a proposal: like a configured command, it runs
only once the user approves it (runs.trust).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fixloop.core import jsoncodec

MAX_READ_BYTES = 1_000_000
NPM_DEFAULT_TEST = 'echo "Error: no test specified" && exit 1'


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
    pytest_source = next(
        (
            source
            for source, present in (
                ("pyproject.toml [tool.pytest.ini_options]", "pytest" in tools),
                ("pytest.ini", (root / "pytest.ini").is_file()),
                ("conftest.py", (root / "conftest.py").is_file()),
                ("tests/conftest.py", (root / "tests" / "conftest.py").is_file()),
                ("setup.cfg [tool:pytest]", "tool:pytest" in _sections(_read(root / "setup.cfg"))),
                ("tox.ini [pytest]", "pytest" in _sections(_read(root / "tox.ini"))),
            )
            if present
        ),
        None,
    )
    if pytest_source is None and (root / "tests").is_dir() and any((root / "tests").glob("test_*.py")):
        pytest_source = "tests/test_*.py"
    if pytest_source:
        found["tests"] = Detected(f"{_tool(root, 'python')} -m pytest -q", pytest_source)
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
