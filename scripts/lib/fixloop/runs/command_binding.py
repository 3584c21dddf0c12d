"""What decides what a verification command does, beyond its text: an approval is bound to it.

`npm test` runs whatever package.json's `scripts.test` says, and `.venv/bin/python -m pytest` runs whatever
`.venv/bin/python` resolves to; a change to either changes the command without changing its text. So an
approval also records, per command:

- for a package manager's script (`npm test`, `npm run X`, `yarn X`, `pnpm X`, `bun run X`): the sha256 of
  the script's body in the project's package.json, and of its `pre`/`post` scripts (npm runs those too);
- for `npx X`: the project's `node_modules/.bin/X`, as for an executable path;
- for an executable named by a path (`.venv/bin/python`, `./scripts/check`): its real path (every
  symbolic link followed) and, when that lies inside the project, the sha256 of its content.

The command text is only split here (shlex, with the shell's operators), never run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path
from typing import Any

PACKAGE_JSON = "package.json"
_OPERATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;"})
_NPM_SCRIPT_COMMANDS = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop"}
_NPM_RUN = frozenset({"run", "run-script", "rum", "urn"})
# Words that name a package manager's own command, not a script of the project.
_BUILTIN_WORDS = (
    "add audit bin cache config create dedupe dlx exec import info init install link list ls node outdated "
    "pack patch plugin prune publish rebuild remove root set store unlink up update upgrade version why "
    "workspace workspaces"
)
_YARN_PNPM_BUILTINS = frozenset(_BUILTIN_WORDS.split())
MISSING = "missing"
Binding = dict[str, str]


def bindings(project: Path, command: str) -> list[Binding]:
    """What decides the behaviour of `command` run in `project`, beyond its text ([] when nothing does)."""
    found: list[Binding] = []
    for words in simple_commands(command):
        found.extend(_bindings_of(project, words))
    return found


def bindings_digest(bound: dict[str, list[Binding]]) -> str:
    canonical = json.dumps(bound, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogateescape")).hexdigest()


def changes(before: dict[str, Any], now: dict[str, list[Binding]]) -> list[str]:
    """What differs between the bindings an approval recorded and today's, one phrase each."""
    said: list[str] = []
    for step, current in now.items():
        earlier = {item.get("what"): item for item in before.get(step) or [] if isinstance(item, dict)}
        for item in current:
            old = earlier.get(item["what"])
            if old is None:
                said.append(f"{step}: {item['what']} is new")
            elif old.get("path") != item.get("path"):
                said.append(f"{step}: {item['what']} now resolves to {item.get('path')}")
            elif old != item:
                said.append(f"{step}: {item['what']} changed")
        kept = {item["what"] for item in current}
        said.extend(f"{step}: {what} is gone" for what in earlier if what not in kept)
    return said


def simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command in `command` (split at the shell's operators, assignments dropped)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: the shell refuses it too
        return []
    result: list[list[str]] = [[]]
    for token in tokens:
        if token in _OPERATORS:
            result.append([])
        else:
            result[-1].append(token)
    return [_without_assignments(words) for words in result if _without_assignments(words)]


def _without_assignments(words: list[str]) -> list[str]:
    index = 0
    while index < len(words) and "=" in words[index] and not words[index].startswith(("=", "-", "/", ".")):
        index += 1
    if index < len(words) and words[index] == "env":
        return _without_assignments(words[index + 1 :])
    return words[index:]


def _bindings_of(project: Path, words: list[str]) -> list[Binding]:
    executable, arguments = words[0], [word for word in words[1:] if not word.startswith("-")]
    found = [_executable(project, executable)] if "/" in executable else []
    name = os.path.basename(executable)
    script = _script_name(name, arguments)
    if script is not None:
        found.extend(_scripts(project, script))
    elif name == "npx" and arguments:
        found.append(_executable(project, os.path.join("node_modules", ".bin", arguments[0])))
    return found


def _script_name(manager: str, arguments: list[str]) -> str | None:
    if not arguments:
        return None
    first = arguments[0]
    if manager == "npm":
        if first in _NPM_RUN:
            return arguments[1] if len(arguments) > 1 else None
        return _NPM_SCRIPT_COMMANDS.get(first)
    if manager in ("yarn", "pnpm"):
        if first == "run":
            return arguments[1] if len(arguments) > 1 else None
        if manager == "pnpm" and first == "t":
            return "test"
        return None if first in _YARN_PNPM_BUILTINS else first
    if manager == "bun" and first == "run":
        return arguments[1] if len(arguments) > 1 else None
    return None


def _scripts(project: Path, script: str) -> list[Binding]:
    from fixloop.core import jsoncodec

    try:
        package = jsoncodec.loads_document((project / PACKAGE_JSON).read_bytes())
    except (OSError, ValueError):
        package = None
    scripts = package.get("scripts") if isinstance(package, dict) else None
    scripts = scripts if isinstance(scripts, dict) else {}
    found: list[Binding] = []
    for name in (f"pre{script}", script, f"post{script}"):
        body = scripts.get(name)
        if name != script and not isinstance(body, str):
            continue
        digest = (
            hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
            if isinstance(body, str)
            else MISSING
        )
        found.append({"what": f"{PACKAGE_JSON} scripts.{name}", "sha256": digest})
    return found


def _executable(project: Path, executable: str) -> Binding:
    real_project = os.path.realpath(project)
    real = os.path.realpath(os.path.join(real_project, executable))
    binding = {"what": executable, "path": real}
    if real == real_project or not real.startswith(real_project.rstrip(os.sep) + os.sep):
        return binding  # outside the project (the interpreter a venv links to): its path decides
    digest = hashlib.sha256()
    try:
        with open(real, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:  # missing, a directory, unreadable: that is what the approval saw
        binding["sha256"] = MISSING
        return binding
    binding["sha256"] = digest.hexdigest()
    return binding
