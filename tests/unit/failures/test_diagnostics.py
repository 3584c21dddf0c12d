from __future__ import annotations

from failures.logfixtures import fixture_text

from fixloop.failures.diagnostics import parse_diagnostics
from fixloop.failures.model import Counts

ORDERS = "/home/runner/work/shop/shop/src/orders.js"


def rows(text: str) -> list[tuple[object, ...]]:
    return [(f.test_id, f.kind, f.file, f.line, f.message) for f in parse_diagnostics(text).failures]


def test_gcc_errors_with_their_code_frames_and_no_warnings() -> None:
    parsed = parse_diagnostics(fixture_text("compiler/gcc.txt"))
    assert rows(fixture_text("compiler/gcc.txt")) == [
        (
            "src/queue.c:7:25",
            "build",
            "src/queue.c",
            7,
            "error: \u2018struct queue\u2019 has no member named \u2018haed\u2019; "
            "did you mean \u2018head\u2019?",
        ),
        (
            "src/queue.c:12:34",
            "build",
            "src/queue.c",
            12,
            "error: expected \u2018;\u2019 before \u2018return\u2019",
        ),
    ]
    assert parsed.failures[0].details == (
        "src/queue.c:7:25: error: \u2018struct queue\u2019 has no member named \u2018haed\u2019; "
        "did you mean \u2018head\u2019?\n"
        "    7 |     return q->tail - q->haed;\n"
        "      |                         ^~~~\n"
        "      |                         head"
    )


def test_mypy_errors_are_type_failures() -> None:
    assert rows(fixture_text("compiler/mypy.txt")) == [
        (
            "app/models.py:6 assignment",
            "type",
            "app/models.py",
            6,
            'error: Incompatible types in assignment (expression has type "int", variable has type "str")'
            "  [assignment]",
        ),
        (
            "app/models.py:7 return-value",
            "type",
            "app/models.py",
            7,
            'error: Incompatible return value type (got "str", expected "int")  [return-value]',
        ),
        (
            "app/models.py:10 no-untyped-def",
            "type",
            "app/models.py",
            10,
            "error: Function is missing a type annotation  [no-untyped-def]",
        ),
    ]
    assert parse_diagnostics(fixture_text("compiler/mypy.txt")).counts == Counts(errors=3)


def test_ruff_concise_and_full_formats_give_the_same_failures() -> None:
    expected = [
        ("app/models.py:1:8 F401", "lint", "app/models.py", 1, "F401 [*] `os` imported but unused"),
        ("app/models.py:2:8 F401", "lint", "app/models.py", 2, "F401 [*] `sys` imported but unused"),
    ]
    assert rows(fixture_text("compiler/ruff_concise.txt")) == expected
    assert rows(fixture_text("compiler/ruff_full.txt")) == expected
    full = parse_diagnostics(fixture_text("compiler/ruff_full.txt")).failures[0]
    assert full.details.split("\n")[:3] == [
        "F401 [*] `os` imported but unused",
        " --> app/models.py:1:8",
        "  |",
    ]


def test_tsc_plain_and_pretty() -> None:
    expected = [
        (
            "src/price.ts:4:9 TS2322",
            "type",
            "src/price.ts",
            4,
            "error TS2322: Type 'number' is not assignable to type 'string'.",
        ),
        (
            "src/price.ts:5:19 TS2551",
            "type",
            "src/price.ts",
            5,
            "error TS2551: Property 'curency' does not exist on type 'Price'. Did you mean 'currency'?",
        ),
        (
            "src/price.ts:9:3 TS2741",
            "type",
            "src/price.ts",
            9,
            "error TS2741: Property 'currency' is missing in type '{ amount: number; }' "
            "but required in type 'Price'.",
        ),
    ]
    assert rows(fixture_text("compiler/tsc.txt")) == expected
    assert rows(fixture_text("compiler/tsc_pretty.txt")) == expected


def test_eslint_stylish_and_unix_skip_warnings() -> None:
    assert rows(fixture_text("compiler/eslint_stylish.txt")) == [
        (
            f"{ORDERS}:1:7 no-unused-vars",
            "lint",
            ORDERS,
            1,
            "'fs' is assigned a value but never used [no-unused-vars]",
        ),
        (f"{ORDERS}:5:5 no-undef", "lint", ORDERS, 5, "'console' is not defined [no-undef]"),
        (f"{ORDERS}:5:5 no-console", "lint", ORDERS, 5, "Unexpected console statement [no-console]"),
        (f"{ORDERS}:7:10 no-undef", "lint", ORDERS, 7, "'ordrs' is not defined [no-undef]"),
    ]
    assert [row[0] for row in rows(fixture_text("compiler/eslint_unix.txt"))] == [
        f"{ORDERS}:1:7 no-unused-vars",
        f"{ORDERS}:5:5 no-undef",
        f"{ORDERS}:5:5 no-console",
        f"{ORDERS}:7:10 no-undef",
    ]
    assert parse_diagnostics(fixture_text("compiler/eslint_stylish.txt")).counts == Counts(errors=4)


def test_pyright_go_vet_and_notes() -> None:
    text = (
        "/home/runner/work/shop/shop/src/shop/cart.py\n"
        '  /home/runner/work/shop/shop/src/shop/cart.py:12:16 - error: Cannot access attribute "totl"\n'
        "internal/db/db.go:31:2: declared and not used: rows\n"
        "app/models.py:6: error: Incompatible types in assignment  [assignment]\n"
        "app/models.py:6: note: Consider using a Decimal\n"
    )
    parsed = parse_diagnostics(text)
    assert [(f.kind, f.file, f.line) for f in parsed.failures] == [
        ("type", "/home/runner/work/shop/shop/src/shop/cart.py", 12),
        ("build", "internal/db/db.go", 31),
        ("type", "app/models.py", 6),
    ]
    assert parsed.failures[2].details.split("\n")[-1] == "app/models.py:6: note: Consider using a Decimal"


def test_test_runner_locations_are_not_diagnostics() -> None:
    text = fixture_text("pytest/default.txt") + fixture_text("playwright/list.txt")
    assert parse_diagnostics(text).failures == ()
