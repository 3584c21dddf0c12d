"""Checking a loop configuration document against LoopConfig, as violations rather than pydantic errors."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from fixloop.contracts.coordinator import LoopConfig


def _path_text(location: tuple[int | str, ...]) -> str:
    text = "$"
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def config_violations(document: dict[str, Any]) -> list[dict[str, str]]:
    """Every way `document` breaks LoopConfig (strict types, unknown keys), as {"path", "message"}."""
    try:
        LoopConfig.model_validate(document, strict=True)
    except ValidationError as error:
        return [
            {
                "path": _path_text(tuple(item["loc"])),
                "message": "unknown key" if item["type"] == "extra_forbidden" else item["msg"],
            }
            for item in error.errors()
        ]
    return []


def parse_config(document: dict[str, Any]) -> LoopConfig | list[dict[str, str]]:
    """The LoopConfig of `document`, or its violations (messages as pydantic words them)."""
    try:
        return LoopConfig.model_validate(document, strict=True)
    except ValidationError as error:
        return [{"path": _path_text(tuple(item["loc"])), "message": item["msg"]} for item in error.errors()]
