"""The failures tests' inputs: the checked-in outputs, and GitHub Actions logs grown from a template.

tests/fixtures/logs/ci/github_log_failed.template is a `gh run view --log-failed` log in which `{ts}`
stands for the timestamp and `{{repeat N}}` ... `{{end}}` for a block printed N times (`{i}` its round,
`{pct}` a percentage).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
TEMPLATE = LOGS / "ci" / "github_log_failed.template"


def fixture_text(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8")


def _timestamp(tick: int) -> str:
    """2024-05-14T09:12:03.1234567Z, 1.3 ms later per tick."""
    ticks = 3 * 10_000_000 + tick * 13_000  # in 100 ns
    seconds, fraction = divmod(ticks, 10_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes + 12, 60)
    return f"2024-05-14T{9 + hours:02d}:{minute:02d}:{second:02d}.{fraction:07d}Z"


def _expand(lines: list[str], scale: int) -> Iterator[str]:
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("{{repeat "):
            count = int(line[len("{{repeat ") : -2]) * scale
            end = lines.index("{{end}}", index)
            body = lines[index + 1 : end]
            for round_ in range(count):
                pct = f"{min(99, round_ * 100 // count):2d}"
                for text in body:
                    yield text.replace("{i}", str(round_)).replace("{pct}", pct)
            index = end + 1
        else:
            yield line
            index += 1


def write_github_log(path: Path, scale: int = 1) -> int:
    """Write the template's log, its repeated blocks `scale` times longer; returns the size in bytes."""
    lines = TEMPLATE.read_text(encoding="utf-8").split("\n")[:-1]
    size = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        batch: list[str] = []
        for tick, line in enumerate(_expand(lines, scale)):
            batch.append(line.replace("{ts}", _timestamp(tick)) + "\n")
            if len(batch) == 10_000:
                size += out.write("".join(batch))
                batch = []
        size += out.write("".join(batch))
    return path.stat().st_size if size else 0
