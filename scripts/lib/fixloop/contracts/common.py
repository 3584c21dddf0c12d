"""Building blocks shared by the agent contracts."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

NonEmptyStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Confidence = Annotated[int, Field(ge=0, le=100, strict=True)]
Score = Annotated[int, Field(ge=0, le=100, strict=True)]
SessionId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8}$")]

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def repo_relative_path(value: str) -> str:
    """`./src/a.py` -> `src/a.py`; absolute paths and `..` parts are refused (ValueError)."""
    path = value.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if path.startswith("/") or _WINDOWS_DRIVE.match(value):
        raise ValueError("must be relative to the repository root, not absolute")
    if ".." in path.split("/"):
        raise ValueError("must stay inside the repository (no '..' parts)")
    if path.strip("/") in ("", "."):
        raise ValueError("must name a file inside the repository")
    return path


RepoPath = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1), AfterValidator(repo_relative_path)
]

AgentStatus = Literal["success", "failed"]
Severity = Literal["critical", "high", "medium", "low"]


class Contract(BaseModel):
    """Base for agent documents: unknown fields are errors, so typos surface as violations."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AgentError(Contract):
    code: NonEmptyStr = Field(description="Upper-case error code, e.g. MISSING_INPUT or TIMEOUT.")
    message: NonEmptyStr = Field(description="What went wrong.")
    phase: str = Field(default="unknown", description="Where it went wrong, e.g. reading or analysis.")
    recoverable: bool = Field(default=False, description="true when another attempt could succeed.")
    stack_trace: str | None = Field(default=None, description="Technical detail, if any.")
