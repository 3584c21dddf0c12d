"""The engine's one clock: wall-clock readings as epoch seconds and milliseconds, and their timestamps.

Every duration fixloop logs is the difference of two readings it took itself. Tests replace
`default_clock` (callers look it up at call time, `timekeeping.default_clock`). Standard library only.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Clock = Callable[[], float]


def default_clock() -> float:
    return time.time()


def now_ms(clock: Clock) -> int:
    return round(clock() * 1000)


def utc_timestamp_ms(now: float | None = None) -> str:
    """`2024-12-06T14:30:52.123Z` for `now` (seconds since the epoch; the current time if None)."""
    millis = round((time.time() if now is None else now) * 1000)
    seconds, ms = divmod(millis, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{ms:03d}Z"


def text_timestamp(ts: str) -> str:
    """`2024-12-06T14:30:52.123Z` -> `2024-12-06 14:30:52.123` (both UTC); anything else unchanged."""
    if len(ts) == 24 and ts[10] == "T" and ts.endswith("Z"):
        return f"{ts[:10]} {ts[11:23]}"
    return ts
