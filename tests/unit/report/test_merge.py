"""`fixloop review merge`: the shards' reports of one change merged equal the report of one run over the
same findings; one SARIF log; one --fail-on decision."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from helpers_review import two_rounds

from fixloop.report.merge import failing, merge_reports, merge_sarif
from fixloop.report.sarif import sarif

ENGINE = Path(__file__).resolve().parents[3] / "scripts" / "fixloop"
FILES = ["api/a.py", "api/b.py", "assets/logo.png", "core/c.py", "core/d.py", "web/e.ts"]
BINARY = "assets/logo.png"


def finding(number: int, file: str, severity: str) -> dict[str, Any]:
    return {
        "id": f"CR-{number:03d}",
        "file": file,
        "description": f"finding {number}",
        "line": number,
        "severity": severity,
        "category": "bug",
        "confidence": 90,
        "agents": ["code-reviewer"],
        "auto_fixable": True,
    }


FIXED = [finding(1, "api/a.py", "high"), finding(2, "core/c.py", "medium")]
REMAINING = [
    finding(3, "api/b.py", "low"),
    finding(4, "core/d.py", "critical"),
    finding(5, "web/e.ts", "medium"),
]


def report(files: list[str], status: str, run_id: str, shards: int = 1) -> dict[str, Any]:
    """A run's JSON report over `files` (the findings in them), as `review report --format json` gives:
    reviewed in `shards`, with the silent-failure hunter failing on web/e.ts."""
    fixed = [i for i in FIXED if i["file"] in files]
    remaining = [i for i in REMAINING if i["file"] in files]
    reviewed = [name for name in files if name != BINARY]
    missed = [name for name in reviewed if name == "web/e.ts"]
    by_reviewer = {
        "files": len(reviewed),
        "shards": shards,
        "reviewers": {
            "code-reviewer": {"reviewed": len(reviewed), "not_reviewed": []},
            "silent-failure-hunter": {"reviewed": len(reviewed) - len(missed), "not_reviewed": missed},
        },
    }
    left_out = [
        {"file": name, "code": "binary", "reason": "binary"} for name in files if name not in reviewed
    ]
    return {
        "run_id": run_id,
        "status": status,
        "summary": {
            "total_iterations": 2,
            "initial_issues": len(fixed) + len(remaining),
            "final_issues": len(remaining),
            "fixed_issues": len(fixed),
            "termination_reason": "max_iterations",
        },
        "fixed_issues": fixed,
        "remaining_issues": remaining,
        "introduced_issues": [],
        "files_modified": sorted({i["file"] for i in fixed}),
        "coverage": {
            "changed_files": len(files),
            "reviewed_files": len(reviewed),
            "reviewed": reviewed,
            "not_reviewed": left_out,
            "not_reviewed_by_reason": {"binary": len(left_out)} if left_out else {},
            "by_reviewer": by_reviewer,
        },
    }


def test_the_merge_of_shard_reports_equals_one_report_over_the_same_findings() -> None:
    one = report(FILES, "partial", "r0", shards=3)
    shards = [
        report(["core/c.py", "core/d.py"], "success", "r1"),
        report(["web/e.ts", BINARY], "partial", "r2"),
        report(["api/a.py", "api/b.py"], "success", "r3"),
    ]
    merged = merge_reports(shards)
    assert merged["run_ids"] == ["r1", "r2", "r3"]
    assert merged["status"] == "partial"  # the worst shard's
    for key in ("fixed_issues", "remaining_issues", "introduced_issues", "files_modified"):
        assert merged[key] == one[key], key
    assert {key: merged["summary"][key] for key in ("initial_issues", "final_issues", "fixed_issues")} == {
        key: one["summary"][key] for key in ("initial_issues", "final_issues", "fixed_issues")
    }
    assert merged["summary"]["shards"] == 3
    assert merged["coverage"] == one["coverage"]
    assert failing(merged, "high") == [
        {"id": "CR-004", "severity": "critical", "file": "core/d.py", "line": 4}
    ]
    assert failing(merged, "critical") == failing(one, "critical")
    assert failing(merged, "low") == failing(one, "low")


def test_the_merge_of_shard_sarif_logs_holds_every_result_once_with_its_rule() -> None:
    whole = sarif(two_rounds().state)
    results = whole["runs"][0]["results"]
    assert len(results) >= 2
    halves = []
    for part in (results[:1], results[1:]):
        halves.append({**whole, "runs": [{**whole["runs"][0], "results": part}]})
    merged = merge_sarif(halves)
    (run,) = merged["runs"]
    rules = run["tool"]["driver"]["rules"]
    got = sorted((r["properties"]["fixloopId"], rules[r["ruleIndex"]]["id"]) for r in run["results"])
    rules_whole = whole["runs"][0]["tool"]["driver"]["rules"]
    want = sorted((r["properties"]["fixloopId"], rules_whole[r["ruleIndex"]]["id"]) for r in results)
    assert got == want
    assert len({rule["id"] for rule in rules}) == len(rules)


def test_the_command_writes_one_report_one_sarif_and_fails_on_the_level(tmp_path: Path) -> None:
    paths = []
    for number, files in enumerate((["core/c.py", "core/d.py"], ["api/a.py", "api/b.py", "web/e.ts"]), 1):
        path = tmp_path / f"shard-{number}.json"
        path.write_text(json.dumps(report(files, "success", f"r{number}")))
        paths.append(str(path))
        (tmp_path / f"shard-{number}.sarif").write_text(json.dumps(sarif(two_rounds().state)))
    command = [str(ENGINE), "review", "merge", *paths, "--output", str(tmp_path / "merged.json")]
    command += ["--sarif", str(tmp_path / "shard-1.sarif"), "--sarif", str(tmp_path / "shard-2.sarif")]
    command += ["--sarif-output", str(tmp_path / "merged.sarif"), "--fail-on", "high"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert answer["fail_on"] == {
        "level": "high",
        "failed": True,
        "findings": [{"id": "CR-004", "severity": "critical", "file": "core/d.py", "line": 4}],
    }
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["remaining_issues"] == REMAINING
    assert json.loads((tmp_path / "merged.sarif").read_text())["version"] == "2.1.0"
    (tmp_path / "bad.json").write_text("[1]")
    bad = subprocess.run(
        [str(ENGINE), "review", "merge", str(tmp_path / "bad.json")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=60,
    )
    assert bad.returncode != 0 and json.loads(bad.stdout)["error"]["code"] == "INVALID_REPORT"
