"""The command that runs exactly the named tests: the approved test command, split into an argument list,
with the runner's selection arguments added. It runs without a shell, so a test name (from a runner's
output, an agent's answer or the user's description) is one argument and never shell syntax.

A command that needs a shell to mean what it says (pipes, `&&`, redirections, variables, globs, ...) cannot
be split safely; a runner fixloop cannot select for, or a test it cannot name for that runner, neither: the
whole command runs then, and `Selection.reason` says why.

    pytest      node ids appended               unittest  dotted names appended (not after `discover`)
    vitest      the files, then `-t <full names>`   jest  the files (as patterns), then `-t <full names>`
    playwright  `<file>:<line>`, else `-g <names>`  go    `-run=^A$/^b$` and the tests' packages
    cargo       `-- --exact <names>`                node  `--test-name-pattern=<names>` after `--test`
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fixloop.workflows.testselect import detect_runner, short_name

NamedTest = Mapping[str, Any]
Build = Callable[[list[str], Sequence[NamedTest]], "list[str] | str"]

# Characters the shell would read as more than a word: with any of them the command is not split by us.
_SHELL_SYNTAX = frozenset("|&;<>()$`\\*?[]{}~!#\n\r")
# Words sh runs itself (a builtin or keyword): without a shell they mean nothing or something else.
_SHELL_WORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "time"}
    | {"exec", "eval", "source", ".", "cd", "export", "set", "alias", "function", "!", "{", "}", "[", "[["}
    | {"builtin", "command"}
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_JS_REGEX = re.compile(r"([.*+?^${}()|\[\]\\/])")
_GO_REGEX = re.compile(r"([\\.+*?()|\[\]{}^$])")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_GO_PACKAGE = re.compile(r"^[\w.~-]+(?:/[\w.~-]+)*$")
_RUST_PATH = re.compile(r"^[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*$")
_PARAMETERS = re.compile(r"\[[^\[\]]*\]$")


@dataclass(frozen=True)
class Selection:
    """The argument list that runs the named tests, or why the whole command runs instead."""

    argv: tuple[str, ...] | None
    reason: str | None = None

    @property
    def shown(self) -> str | None:
        """The argument list as a person reads it (quoted where a shell would need it)."""
        return shlex.join(self.argv) if self.argv is not None else None


def base_argv(command: str) -> list[str] | str:
    """The approved command as the argument list sh would run, or why it cannot be split without a shell.

    Leading `NAME=value` words become `env NAME=value ...`, as sh would set them for the program."""
    found = sorted(set(command) & _SHELL_SYNTAX)
    if found:
        shown = " ".join("line break" if char in "\n\r" else char for char in found)
        return f"the test command uses shell syntax ({shown}), so it is not split into arguments"
    try:
        words = shlex.split(command)
    except ValueError as error:
        return f"the test command cannot be split into arguments ({error})"
    assignments = 0
    while assignments < len(words) and _ASSIGNMENT.match(words[assignments]):
        assignments += 1
    program = words[assignments : assignments + 1]
    if not program:
        return "the test command names no program"
    if program[0] in _SHELL_WORDS:
        return f"the test command starts with {program[0]!r}, which only a shell runs"
    return ["env", *words] if assignments else words


def select(command: str, tests: Sequence[NamedTest]) -> Selection | None:
    """The command narrowed to `tests`; None when no test is named."""
    if not tests:
        return None
    runner = detect_runner(command)
    build = _BUILDERS.get(runner or "")
    if build is None:
        return Selection(None, "fixloop cannot name single tests to this test command's runner")
    base = base_argv(command)
    if isinstance(base, str):
        return Selection(None, base)
    built = build(base, tests)
    if isinstance(built, str):
        return Selection(None, f"{runner}: {built}")
    return Selection(tuple(built))


# ---- per runner ------------------------------------------------------------------------------------


def _text(test: NamedTest, key: str) -> str:
    return str(test.get(key) or "").strip()


def _no_option(values: Sequence[str], what: str) -> str | None:
    """Why the values cannot be positional arguments (one starts with `-`, so the runner reads an option)."""
    odd = next((value for value in values if not value or value.startswith("-")), None)
    return None if odd is None else f"the {what} {odd!r} would be read as an option"


def _alternatives(names: Sequence[str], escape: re.Pattern[str]) -> str:
    escaped = list(dict.fromkeys(escape.sub(r"\\\1", name) for name in names))
    return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"


def _pytest(base: list[str], tests: Sequence[NamedTest]) -> list[str] | str:
    ids: list[str] = []
    for test in tests:
        test_id, file, name = _text(test, "id"), _text(test, "file"), _text(test, "name")
        if "::" in test_id or test_id.endswith(".py"):
            ids.append(test_id)
        elif name.startswith(f"{file}::") or (not file and "::" in name):
            ids.append(name)
        elif file and name:
            ids.append(f"{file}::{name}")
        else:
            return f"{test_id or name or 'a test'} has no file to make a node id of"
    return _no_option(ids, "node id") or [*base, *dict.fromkeys(ids)]


def _unittest_name(test: NamedTest) -> str | None:
    """The dotted name unittest selects a test by: its id (a subtest's description dropped), else the
    test file's module and the test's `Case.method` name (the module alone for a bare method name)."""
    test_id = _text(test, "id").split(" ", 1)[0]
    if "." in test_id and _DOTTED.match(test_id) and not test_id.startswith("unittest."):
        return test_id  # not a fixture's (`setUpClass (m.Case)`) nor a module's that did not import
    file, name = _text(test, "file").removeprefix("./"), _text(test, "name").replace("::", ".")
    if not file.endswith(".py") or file.startswith("/") or ".." in file:
        return None
    module = file.removesuffix(".py").replace("/", ".")
    if not _DOTTED.match(module):
        return None
    if name.startswith(module + ".") and _DOTTED.match(name):
        return name
    if "." in name and _DOTTED.match(name):
        return f"{module}.{name}"
    return module


def _unittest(base: list[str], tests: Sequence[NamedTest]) -> list[str] | str:
    if "discover" in base:
        return "`unittest discover` takes no test names"
    dotted = [_unittest_name(test) for test in tests]
    missing = next((test for test, name in zip(tests, dotted, strict=True) if name is None), None)
    if missing is not None:
        return f"{_text(missing, 'id') or _text(missing, 'name')!r} has no dotted name unittest can load"
    return [*base, *dict.fromkeys(str(name) for name in dotted)]


def _full_name(test: NamedTest) -> str:
    """Jest's and Vitest's full test name: the describe blocks and the test, joined by spaces (a file that
    heads the id is not part of it)."""
    test_id, file = _text(test, "id"), _text(test, "file")
    parts = [part.strip() for part in test_id.split(" > ")] if " > " in test_id else []
    if parts and (parts[0] == file or re.search(r"\.[cm]?[jt]sx?$", parts[0])):
        parts = parts[1:]
    return " ".join(parts) if parts else _text(test, "name") or short_name(test_id)


def _files(tests: Sequence[NamedTest]) -> list[str] | str:
    files = [_text(test, "file") for test in tests]
    if not all(files):
        return "a named test has no file"
    return _no_option(files, "file") or list(dict.fromkeys(files))


def _vitest(base: list[str], tests: Sequence[NamedTest]) -> list[str] | str:
    files, names = _files(tests), [_full_name(test) for test in tests]
    if isinstance(files, str):
        return files
    if not all(names):
        return "a named test has no name"
    return [*base, *files, "-t", _alternatives(names, _JS_REGEX)]


def _jest(base: list[str], tests: Sequence[NamedTest]) -> list[str] | str:
    names = [_full_name(test) for test in tests]
    if not all(names):
        return "a named test has no name"
    files = _files(tests)
    patterns = [_JS_REGEX.sub(r"\\\1", file) for file in files] if isinstance(files, list) else []
    return [*base, *patterns, "-t", _alternatives(names, _JS_REGEX)]


def _playwright(base: list[str], tests: Sequence[NamedTest]) -> list[str] | str:
    files, lines = _files(tests), [test.get("line") for test in tests]
    if isinstance(files, list) and all(isinstance(line, int) for line in lines):
        places = [f"{_text(test, 'file')}:{test.get('line')}" for test in tests]
        return [*base, *dict.fromkeys(places)]
    names = [_text(test, "name") or short_name(_text(test, "id")) for test in tests]
    return [*base, "-g", _alternatives(names, _JS_REGEX)] if all(names) else "a named test has no name"


def _is_package_pattern(word: str) -> bool:
    return word in (".", "..", "...") or word.startswith(("./", "../")) or word.endswith("/...")


def _go(base: list[str], tests: Sequence[NamedTest]) -> list[str] | str:
    """`-run` with one anchored pattern per level of the names (`TestA/sub` -> `^TestA$/^sub$`), cut to the
    shallowest named test so that no named test loses a subtest; in the tests' packages when all are
    known (the command's own package patterns dropped), else in the command's."""
    names = [_text(test, "id") or _text(test, "name") for test in tests]
    if not all(names):
        return "a named test has no name"
    levels = [name.split("/") for name in names]
    depth = min(len(parts) for parts in levels)
    pattern = "/".join(
        "^" + _alternatives([parts[level] for parts in levels], _GO_REGEX) + "$" for level in range(depth)
    )
    packages = [_text(test, "suite") for test in tests]
    if all(packages) and all(_GO_PACKAGE.match(package) for package in packages):
        kept = [word for word in base[2:] if not _is_package_pattern(word)] if base[1:2] == ["test"] else None
        if kept is not None and base[:1] == ["go"]:
            return ["go", "test", *kept, f"-run={pattern}", *dict.fromkeys(packages)]
    return [*base, f"-run={pattern}"]


def _cargo(base: list[str], tests: Sequence[NamedTest]) -> list[str] | str:
    names = [_PARAMETERS.sub("", _text(test, "id") or _text(test, "name")) for test in tests]
    odd = next((name for name in names if not _RUST_PATH.match(name)), None)
    if odd is not None:
        return f"{odd!r} is not a Rust test path"
    harness = [] if "--" in base else ["--"]
    return [*base, *harness, "--exact", *dict.fromkeys(names)]


def _node_test(base: list[str], tests: Sequence[NamedTest]) -> list[str] | str:
    names = [_text(test, "name") or short_name(_text(test, "id")) for test in tests]
    if not all(names):
        return "a named test has no name"
    at = base.index("--test") + 1  # node reads options only before the first file
    return [*base[:at], f"--test-name-pattern={_alternatives(names, _JS_REGEX)}", *base[at:]]


_BUILDERS: dict[str, Build] = {
    "pytest": _pytest,
    "unittest": _unittest,
    "vitest": _vitest,
    "jest": _jest,
    "playwright": _playwright,
    "go": _go,
    "cargo": _cargo,
    "node-test": _node_test,
}
SELECTING_RUNNERS: tuple[str, ...] = tuple(_BUILDERS)
