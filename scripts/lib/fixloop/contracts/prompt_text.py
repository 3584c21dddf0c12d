"""The agent-facing text of the contracts, generated from the models so it cannot drift from them.

- `contract_text(kind)`: for `reviewer`, `fixer`, `verifier` and every workflow agent, the exact JSON
  shape the agent must answer with: every field, nested ones indented, with its type or allowed values,
  whether it is required, and its meaning (the field's description in the model). A field added to a
  model appears here by itself.
- The texts are rendered from the models by `rendered_contract_text(kind)`; `python -m
  fixloop.contracts.schemagen` writes them to schemas/contract-texts.json (its `--check` finds drift), and
  `contract_text` reads that file, so a `fixloop next` does not load pydantic to send a contract.
- `review_guide_text(confidence_threshold)`: how every reviewer works (scope, the confidence scale, the
  threshold), shared by the six reviewers; each reviewer's own markdown holds only its focus.

Both are sent in the engine's prompts, so they stay compact.
"""

from __future__ import annotations

import importlib
import json
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fixloop.contracts.runconfig import RunConfig
from fixloop.core.contract_opening import CONTRACT_OPENING
from fixloop.core.errors import FixloopError

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

# The models load when a text is first asked for, only the one asked for when it is a review agent's: a
# review run's `next` renders the reviewers', the verifier's or the fixer's contract, never the others.
_REVIEW_MODELS: dict[str, tuple[str, str]] = {
    "reviewer": ("fixloop.contracts.reviewer", "ReviewerOutput"),
    "fixer": ("fixloop.contracts.fixer", "FixerOutput"),
    "verifier": ("fixloop.contracts.verifier", "VerifierOutput"),
}
# Each workflow's dict of models, kind -> model, in this order after the review agents'.
_WORKFLOW_MODELS: tuple[tuple[str, str], ...] = (
    ("fixloop.contracts.bugfix", "BUGFIX_MODELS"),
    ("fixloop.contracts.pr", "PR_MODELS"),
    ("fixloop.contracts.plan", "PLAN_MODELS"),
    ("fixloop.contracts.ci", "CI_MODELS"),
)


_MODELS: dict[str, type[BaseModel]] = {}  # the models loaded so far; all of them once _complete
_complete = False


def _review_model(kind: str) -> type[BaseModel]:
    module, attribute = _REVIEW_MODELS[kind]
    model: type[BaseModel] = getattr(importlib.import_module(module), attribute)
    return model


def contract_models() -> dict[str, type[BaseModel]]:
    """Every kind with a contract text and its model: the review agents', then each workflow's."""
    global _complete
    if not _complete:
        ordered = {kind: _MODELS.get(kind) or _review_model(kind) for kind in _REVIEW_MODELS}
        for module, attribute in _WORKFLOW_MODELS:
            ordered.update(getattr(importlib.import_module(module), attribute))
        _MODELS.clear()
        _MODELS.update(ordered)
        _complete = True
    return _MODELS


def __getattr__(name: str) -> Any:
    if name == "CONTRACT_MODELS":
        return contract_models()
    if name == "CONTRACT_KINDS":
        return tuple(contract_models())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


INDENT = "  "

# (lowest, highest, meaning): contiguous bands from 0 to 100.
CONFIDENCE_SCALE: tuple[tuple[int, int, str], ...] = (
    (0, 25, "probably wrong, or a matter of taste."),
    (26, 50, "plausible, but not checked against the code."),
    (51, 79, "real but minor, or depends on context you could not check."),
    (80, 89, "checked in the code; it will matter in practice."),
    (90, 100, "certain; the code shows it happens."),
)
REVIEW_SCOPE: tuple[str, ...] = (
    "Review the changed lines and the code they touch; read surrounding code, callers and tests as needed.",
    "Stay read-only: use Bash only for read-only git commands such as `git diff BASE -- FILE` and `git log`.",
    "Check every finding against the code before you report it; report each issue once, at its exact lines.",
    "Keep to your own focus: what it leaves to the other reviewers, they report.",
)


def default_confidence_threshold() -> int:
    return RunConfig().confidence_threshold


def review_guide_text(confidence_threshold: int | None = None) -> str:
    """How every fixloop reviewer reviews; the threshold defaults to the loop configuration's."""
    threshold = default_confidence_threshold() if confidence_threshold is None else confidence_threshold
    lines = ["How to review:", *(f"- {rule}" for rule in REVIEW_SCOPE)]
    lines.append(f"Confidence (0-100); report only issues with confidence >= {threshold}:")
    lines += [f"- {low}-{high}: {meaning}" for low, high, meaning in CONFIDENCE_SCALE]
    return "\n".join(lines)


TEXTS_FILE = Path(__file__).resolve().parent / "schemas" / "contract-texts.json"
_texts: dict[str, str] = {}


def contract_text(kind: str) -> str:
    """The JSON answer an agent of `kind` (one of CONTRACT_KINDS) must give, field by field: the text
    schemagen wrote from the model (rendered from the model when that file cannot be read)."""
    if not _texts:
        try:
            loaded = json.loads(TEXTS_FILE.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = None
        if isinstance(loaded, dict) and all(isinstance(text, str) for text in loaded.values()):
            _texts.update(loaded)
    text = _texts.get(kind)
    return text if text is not None else rendered_contract_text(kind)


def rendered_contract_text(kind: str) -> str:
    """contract_text(kind), rendered from the kind's model."""
    model = contract_model(kind)
    lines = [
        f"{CONTRACT_OPENING}, the {kind} contract: no prose, no code fence.",
        "Fields (nested ones indented); `required` fields must be present, the others may be left out:",
        *field_lines(model),
    ]
    return "\n".join(lines)


def contract_model(kind: str) -> type[BaseModel]:
    if kind in _MODELS:
        return _MODELS[kind]
    if kind in _REVIEW_MODELS and not _complete:
        _MODELS[kind] = _review_model(kind)
        return _MODELS[kind]
    models = contract_models()
    try:
        return models[kind]
    except KeyError:
        from fixloop.contracts.kinds import UNKNOWN_KIND

        raise FixloopError(
            UNKNOWN_KIND,
            f"No contract text for kind '{kind}'; use one of: {', '.join(models)}.",
            kind=kind,
            allowed=list(models),
        ) from None


def field_lines(model: type[BaseModel], depth: int = 0) -> Iterator[str]:
    """`- name (required; shape): description`, one line per field, nested objects below their field."""
    for name, info in model.model_fields.items():
        shape, nested = field_shape(info)
        flag = "required" if info.is_required() else "optional"
        line = f"{INDENT * depth}- {name} ({flag}; {shape})"
        if info.description:
            line += f": {info.description}"
        yield line
        if nested is not None:
            yield from field_lines(nested, depth + 1)


def field_shape(info: FieldInfo) -> tuple[str, type[BaseModel] | None]:
    """The JSON shape of a field in words, and the model of its objects when they have fields to list."""
    extra = info.json_schema_extra
    allowed = extra.get("enum") if isinstance(extra, Mapping) else None
    if isinstance(allowed, list) and allowed:
        return _alternatives(allowed), None
    return _shape(info.annotation, list(info.metadata))


def _shape(annotation: Any, constraints: list[Any]) -> tuple[str, type[BaseModel] | None]:
    from pydantic import BaseModel

    from fixloop.contracts.describe import min_length, pattern_of, range_text, unwrap

    core, constraints = unwrap(annotation, constraints)
    origin = typing.get_origin(core)
    if isinstance(core, type) and issubclass(core, BaseModel):
        return "object", core
    if origin is list:
        (item,) = typing.get_args(core) or (Any,)
        shape, nested = _shape(item, [])
        return f"array of {_plural(shape)}", nested
    if origin is Literal:
        return _alternatives(list(typing.get_args(core))), None
    if core is bool:
        return "true | false", None
    if core is int:
        return "integer" + range_text(constraints), None
    if core is float:
        return "number" + range_text(constraints), None
    if core is str:
        pattern = pattern_of(constraints)
        if pattern:
            return f"string matching {pattern}", None
        return ("non-empty string" if min_length(constraints) else "string"), None
    if origin is dict:
        return "object", None
    return "any JSON value", None


def _alternatives(values: list[Any]) -> str:
    return " | ".join(json.dumps(value) for value in values)


def _plural(shape: str) -> str:
    if shape == "object" or shape.endswith("string"):
        return shape + "s"
    return shape
