from __future__ import annotations

TYPE_CHECKING = False  # hooks import this module: typing is not loaded at run time
if TYPE_CHECKING:
    from typing import Any


class FixloopError(Exception):
    """An error with a stable code, printed to callers as {"status":"failed","error":{...}}.

    exit_code 2 means the input was bad; 1 means the input was read but the check it asked for failed.
    """

    def __init__(self, code: str, message: str, exit_code: int = 2, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.exit_code = exit_code
        self.details = details

    def to_document(self) -> dict[str, Any]:
        return {"status": "failed", "error": {"code": self.code, "message": self.message, **self.details}}
