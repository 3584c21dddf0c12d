"""Time of redaction on texts a run meets: a big log line, a big JSON document, a table, many short events.

    python3 tests/benchmarks/bench_redact.py [--lib scripts/lib] [--runs 5]

--lib names the `scripts/lib` to measure (another checkout's, to compare before and after a change of the
rules). Prints the median CPU time of each case over --runs runs (the rules compiled beforehand) and how
many secrets it masked. Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cases() -> dict[str, list[str]]:
    words = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "the", "build")
    words += ("prints", "its", "progress", "and", "one", "key")
    log_line = " ".join(words[i % len(words)] for i in range(200_000))  # ~1 MB, one line
    record = {"name": "api_token", "value": "x", "status": "ok", "path": "src/app.py", "count": 12}
    json_doc = json.dumps([record] * 20_000)  # quotes and `",` everywhere
    table = "\n".join(f"| {n:>16} | row {n} | 1234567890123456|{'x' * 10} |" for n in range(20_000))
    events = [
        f'{{"type": "AGENT_RESULT", "agent": "code-reviewer", "n": {n}, "ok": true}}' for n in range(20_000)
    ]
    secrets = "\n".join(
        [
            "curl -u admin:s3cr3tpass https://x",
            "password = hunter2hunter2",
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
            "facebook 1308742762612587|rhoK1cbv0DOU_RTX_87O4MkX7AI",
        ]
        * 2_000
    )
    return {
        "log line, 1 MB": [log_line],
        "JSON document, 2 MB": [json_doc],
        "table with pipes, 1 MB": [table],
        "20,000 short events": events,
        "8,000 lines with secrets": [secrets],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lib", default=str(ROOT / "scripts" / "lib"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, args.lib)
    from fixloop.core.redact import REDACTED, redact

    redact_text: Callable[[str], str] = redact
    for name, texts in cases().items():
        for text in texts[:50]:
            redact_text(text)  # compile every rule the case needs
        times = []
        masked = 0
        for _ in range(args.runs):
            started = time.process_time()
            outputs = [redact_text(text) for text in texts]
            times.append(time.process_time() - started)
            masked = sum(output.count(REDACTED) for output in outputs)
        print(f"{name:<28} {statistics.median(times) * 1000:9.1f} ms  masked {masked}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
