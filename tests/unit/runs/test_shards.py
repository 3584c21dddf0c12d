"""`fixloop review shards`: a change split for a CI matrix, related files together, every file in exactly
one shard."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fixloop.runs import shards as sharding

ENGINE = Path(__file__).resolve().parents[3] / "scripts" / "fixloop"


@pytest.mark.parametrize(
    ("path", "stem"),
    [
        ("tests/test_app.py", "app"),
        ("pkg/app_test.go", "app"),
        ("web/cart.test.ts", "cart"),
        ("web/cart.spec.js", "cart"),
        ("src/test/FooTest.java", "Foo"),
        ("src/app.py", None),
        ("src/contest.py", None),
        ("README.md", None),
    ],
)
def test_a_test_file_names_the_code_it_tests(path: str, stem: str | None) -> None:
    assert sharding.tested_stem(path) == stem


def test_a_test_goes_with_its_code_and_a_directory_stays_together() -> None:
    files = ["src/app.py", "src/db.py", "tests/test_app.py", "tests/test_misc.py", "docs/a.md", "web/cart.ts"]
    files.append("web/cart.test.ts")
    assert sharding.groups(files) == [
        ["docs/a.md"],
        ["src/app.py", "src/db.py", "tests/test_app.py"],
        ["tests/test_misc.py"],
        ["web/cart.test.ts", "web/cart.ts"],
    ]


def test_an_ambiguous_test_stays_in_its_own_directory() -> None:
    assert sharding.groups(["a/app.py", "b/app.py", "tests/test_app.py"]) == [
        ["a/app.py"],
        ["b/app.py"],
        ["tests/test_app.py"],
    ]


def test_shards_cover_every_file_once_within_the_limit() -> None:
    files = [f"pkg{d}/mod_{n}.py" for d in range(7) for n in range(13)] + [
        f"tests/test_mod_{n}.py" for n in range(5)
    ]
    shards = sharding.plan_shards(files, 20)
    assert sorted(name for shard in shards for name in shard) == sorted(files)
    assert all(1 <= len(shard) <= 20 for shard in shards)
    # a directory of 13 (plus nothing) is never split across shards
    for d in range(7):
        holders = [i for i, shard in enumerate(shards) if any(n.startswith(f"pkg{d}/") for n in shard)]
        assert len(holders) == 1, (d, holders)
    assert sharding.plan_shards([f"big/f{n:02d}.py" for n in range(25)], 10) == [
        [f"big/f{n:02d}.py" for n in range(0, 10)],
        [f"big/f{n:02d}.py" for n in range(10, 20)],
        [f"big/f{n:02d}.py" for n in range(20, 25)],
    ]
    assert sharding.plan_shards([], 5) == []


def test_the_command_plans_the_matrix(tmp_path: Path) -> None:
    listing = tmp_path / "changed.txt"
    listing.write_text("src/app.py\n\ntests/test_app.py\nsrc/it's.py\ndocs/a.md\nsrc/app.py\n")
    done = subprocess.run(
        [str(ENGINE), "review", "shards", "--files-from", str(listing), "--max-files", "3"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "files": 4,
        "max_files": 3,
        "shards": [
            {"shard": 1, "files": ["docs/a.md"], "arguments": "docs/a.md"},
            {
                "shard": 2,
                "files": ["src/app.py", "src/it's.py", "tests/test_app.py"],
                "arguments": "src/app.py 'src/it'\"'\"'s.py' tests/test_app.py",
            },
        ],
        "matrix": {"shard": [1, 2]},
    }
    bad = subprocess.run(
        [str(ENGINE), "review", "shards", "--files-from", str(listing), "--max-files", "0"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=60,
    )
    assert bad.returncode != 0 and "Traceback" not in bad.stderr + bad.stdout
