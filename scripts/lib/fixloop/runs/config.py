"""The effective loop configuration: defaults < `.claude/fixloop.json` in the project < `--config FILE`.

Each file is a JSON object of LoopConfig fields (a `$schema` key is allowed and ignored). A later source
overrides an earlier one key by key; `prices` is merged model by model over the list prices, so a file that
prices one model leaves the others priced. Nothing is guessed: a verification command that no source sets
stays unset, and the verify step reports it as skipped with reason "not_configured".
Any problem (unreadable file, bad JSON, unknown key, wrong type) is INVALID_CONFIG listing every violation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixloop.contracts.config_check import config_violations, parse_config
from fixloop.contracts.coordinator import DEFAULT_PRICES, LoopConfig
from fixloop.contracts.runconfig import COMMAND_FIELDS as COMMAND_FIELDS  # where the tests find it
from fixloop.core import jsoncodec
from fixloop.core.errors import FixloopError

PROJECT_CONFIG = Path(".claude") / "fixloop.json"
MAX_CONFIG_BYTES = 1_000_000


@dataclass(frozen=True)
class LoadedConfig:
    config: LoopConfig
    sources: list[str] = field(default_factory=list)  # files read, in the order applied

    def dump(self) -> dict[str, Any]:
        return self.config.model_dump(mode="json")


def _invalid(source: Path, violations: list[dict[str, str]]) -> FixloopError:
    return FixloopError(
        "INVALID_CONFIG",
        f"Invalid fixloop configuration in {source}: "
        + "; ".join(f"{item['path']}: {item['message']}" for item in violations),
        file=str(source),
        violations=violations,
    )


def read_config_file(path: Path) -> dict[str, Any]:
    """One config file as a dict of LoopConfig fields, checked field by field (unknown keys are errors)."""
    try:
        if path.is_dir():
            raise _invalid(path, [{"path": "$", "message": "is a directory, not a JSON file"}])
        raw = path.read_bytes()[: MAX_CONFIG_BYTES + 1]
    except FileNotFoundError:
        raise _invalid(path, [{"path": "$", "message": "file not found"}]) from None
    except OSError as error:
        raise _invalid(path, [{"path": "$", "message": f"cannot read: {error.strerror or error}"}]) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise _invalid(path, [{"path": "$", "message": f"larger than {MAX_CONFIG_BYTES} bytes"}])
    try:
        document = jsoncodec.loads_document(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise _invalid(path, [{"path": "$", "message": f"not UTF-8: {error.reason}"}]) from None
    except json.JSONDecodeError as error:
        message = f"invalid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        raise _invalid(path, [{"path": "$", "message": message}]) from None
    if not isinstance(document, dict):
        raise _invalid(
            path, [{"path": "$", "message": f"must be a JSON object, not {type(document).__name__}"}]
        )
    document.pop("$schema", None)
    violations = _violations(document)
    if violations:
        raise _invalid(path, violations)
    return document


def _violations(document: dict[str, Any]) -> list[dict[str, str]]:
    violations = config_violations(document)
    for name in COMMAND_FIELDS.values():
        value = document.get(name)
        if isinstance(value, str) and not value.strip():
            violations.append({"path": f"$.{name}", "message": "must be a command or null, not blank"})
    return sorted(violations, key=lambda item: item["path"])


def load_config(project: Path, config_file: str | Path | None = None) -> LoadedConfig:
    """Merge the defaults, the project's `.claude/fixloop.json` (when present) and `config_file` (when given).

    `config_file` may be any readable path; a relative one is taken from the current directory.
    """
    merged: dict[str, Any] = {}
    sources: list[str] = []
    prices: dict[str, Any] = {name: price.model_dump() for name, price in DEFAULT_PRICES.items()}
    files = [project / PROJECT_CONFIG] if (project / PROJECT_CONFIG).exists() else []
    if config_file is not None:
        files.append(Path(config_file).expanduser().absolute())
    for path in files:
        document = read_config_file(path)
        prices.update(document.get("prices") or {})
        merged.update(document)
        sources.append(str(path))
    if "prices" in merged:
        merged["prices"] = prices
    violations = _violations(merged)
    if violations:  # each file is valid alone, so this cannot happen; kept as a guard
        raise _invalid(Path(sources[-1]) if sources else project / PROJECT_CONFIG, violations)
    parsed = parse_config(merged)
    assert not isinstance(parsed, list)  # no violations, checked above
    return LoadedConfig(config=parsed, sources=sources)


def config_from_dump(document: object) -> LoopConfig:
    """The LoopConfig stored in a run's state (the state file is data from disk: validate it again)."""
    if not isinstance(document, dict):
        raise FixloopError("INVALID_STATE", "The run state has no config object.", field="config")
    parsed = parse_config(document)
    if isinstance(parsed, list):
        raise FixloopError(
            "INVALID_STATE", "The run state's config is invalid.", field="config", violations=parsed
        )
    return parsed


def command_status(config: LoopConfig) -> dict[str, dict[str, Any]]:
    """Which verification commands are set: {"tests": {"command": ..., "configured": bool, "reason": ...}}."""
    status: dict[str, dict[str, Any]] = {}
    for step, name in COMMAND_FIELDS.items():
        command = getattr(config, name)
        configured = isinstance(command, str) and bool(command.strip())
        status[step] = {
            "command": command if configured else None,
            "configured": configured,
            "reason": None if configured else "not_configured",
        }
    return status
