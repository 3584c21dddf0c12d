from __future__ import annotations

from failures.logfixtures import LOGS

from fixloop.failures.junit import parse_junit
from fixloop.failures.model import Counts


def junit(name: str) -> bytes:
    return (LOGS / "junit" / name).read_bytes()


def test_pytest_report() -> None:
    parsed = parse_junit(junit("pytest.xml"))
    assert [(f.test_id, f.kind, f.suite, f.message) for f in parsed.failures] == [
        ("tests.test_calc.test_add_negative", "test", "pytest", "assert -2 == -3"),
        (
            "tests.test_calc.test_parse_price_rejects_words",
            "test",
            "pytest",
            "ValueError: could not convert string to float: 'ten dollars'",
        ),
        ("tests.test_calc.test_add_param[2-2-5]", "test", "pytest", "assert 4 == 5"),
        (
            "tests.test_calc.TestDict.test_keys",
            "test",
            "pytest",
            "AssertionError: assert {'a': 1, 'b': 2} == {'a': 1, 'b': 3}",
        ),
        (
            "tests.test_calc.test_with_db",
            "error",
            "pytest",
            'failed on setup with "RuntimeError: database is not reachable"',
        ),
    ]
    assert parsed.counts == Counts(passed=4, failed=4, skipped=1, errors=1)
    assert parsed.failures[0].details == (
        "def test_add_negative():\n"
        ">       assert add(-1, -1) == -3\n"
        "E       assert -2 == -3\n"
        "E        +  where -2 = add(-1, -1)\n"
        "\n"
        "tests/test_calc.py:17: AssertionError"
    )


def test_vitest_report_names_tests_by_file_and_path() -> None:
    parsed = parse_junit(junit("vitest.xml"))
    assert [(f.test_id, f.file, f.message) for f in parsed.failures] == [
        (
            "vt/broken.test.js",
            "vt/broken.test.js",
            "Cannot find module '../src/missing.js' imported from "
            "/home/runner/work/shop/shop/vt/broken.test.js",
        ),
        (
            "vt/cart.test.js > cart > total > is zero for an empty cart",
            "vt/cart.test.js",
            "expected +0 to be 1 // Object.is equality",
        ),
        ("vt/cart.test.js > cart > applies a coupon", "vt/cart.test.js", 'coupon has no code: {"off":3}'),
        (
            "vt/cart.test.js > cart > keeps the line items",
            "vt/cart.test.js",
            "expected { items: [ 1, 2 ], currency: 'EUR' } "
            "to deeply equal { items: [ 1, 2, 3 ], currency: 'EUR' }",
        ),
    ]
    assert parsed.counts == Counts(passed=2, failed=4, skipped=1, errors=0)


def test_jest_junit_report() -> None:
    parsed = parse_junit(junit("jest.xml"))
    assert [(f.test_id, f.suite, f.message) for f in parsed.failures] == [
        (
            "cart total is zero for an empty cart",
            "cart",
            "Error: expect(received).toBe(expected) // Object.is equality",
        ),
        ("cart applies a coupon", "cart", 'TypeError: coupon has no code: {"off":3}'),
        ("cart keeps the line items", "cart", "Error: expect(received).toEqual(expected) // deep equality"),
    ]
    assert parsed.counts == Counts(passed=2, failed=3, skipped=1, errors=0)


def test_playwright_report() -> None:
    parsed = parse_junit(junit("playwright.xml"))
    assert [(f.test_id, f.kind, f.message) for f in parsed.failures] == [
        (
            "checkout.spec.js > checkout \u203a shows the total",
            "test",
            "expect(received).toBe(expected) // Object.is equality",
        ),
        ("checkout.spec.js > checkout \u203a rejects an expired card", "test", "payment gateway timed out"),
        (
            "checkout.spec.js > home page lists products",
            "test",
            "expect(received).toEqual(expected) // deep equality",
        ),
    ]
    assert parsed.counts == Counts(passed=1, failed=2, skipped=1, errors=1)


def test_surefire_report_ignores_flaky_failures() -> None:
    parsed = parse_junit(junit("surefire.xml"))
    assert [(f.test_id, f.suite, f.message) for f in parsed.failures] == [
        (
            "com.example.shop.CartTest.totalOfEmptyCartIsZero",
            "com.example.shop.CartTest",
            "expected: <0> but was: <1>",
        ),
        (
            "com.example.shop.CartTest.appliesCoupon",
            "com.example.shop.CartTest",
            'Cannot invoke "com.example.shop.Coupon.code()" because "coupon" is null',
        ),
    ]
    assert parsed.counts == Counts(passed=2, failed=1, skipped=1, errors=1)
    assert parsed.failures[0].details.split("\n")[-1] == (
        "\tat com.example.shop.CartTest.totalOfEmptyCartIsZero(CartTest.java:18)"
    )


def test_text_with_an_encoding_declaration_and_file_attributes() -> None:
    text = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        '<testsuite name="unit"><testcase classname="Calc" name="test_é" file="tests/calc.py" line="12">'
        '<failure message="boom">trace</failure></testcase></testsuite>'
    )
    parsed = parse_junit(text)
    assert [(f.test_id, f.file, f.line, f.suite, f.details) for f in parsed.failures] == [
        ("Calc.test_é", "tests/calc.py", 12, "unit", "trace")
    ]


def test_a_doctype_is_refused_so_entities_never_expand() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
        b'<testsuite><testcase name="x"><failure message="&lol2;"/></testcase></testsuite>'
    )
    parsed = parse_junit(bomb)
    assert parsed.failures == ()
    assert parsed.notes[0] == "refused a JUnit document with a DOCTYPE (entity definitions)"


def test_garbled_xml_gives_a_note() -> None:
    parsed = parse_junit(b"<testsuite><testcase name='x'>")
    assert parsed.failures == ()
    assert parsed.notes[0].startswith("not a readable JUnit XML document:")
    assert parse_junit(b"<report/>").notes[0] == "the JUnit document holds no testcase"


def test_a_doctype_in_another_encoding_is_refused_too() -> None:
    bomb = (
        '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE t [<!ENTITY e "boom">]>'
        '<testsuite><testcase name="x"><failure message="&e;"/></testcase></testsuite>'
    )
    for data in (bomb.encode("utf-16"), bomb.encode("utf-32"), bomb.encode("utf-16-le")):
        parsed = parse_junit(data)
        assert parsed.failures == ()
        assert parsed.notes[0] in (
            "refused a JUnit document with a DOCTYPE (entity definitions)",
            "not a readable JUnit XML document: its encoding is not declared",  # UTF-16 without a mark
        )


def test_declarations_cannot_switch_the_parser_s_encoding() -> None:
    stacked = (
        b'<?xml version="1.0"?>\n<?xml version="1.0" encoding="cp037"?>'
        b'<testsuite><testcase name="t"/></testsuite>'
    )
    assert parse_junit(stacked).counts == Counts(passed=1, failed=0, skipped=0, errors=0)  # read as UTF-8
    later = b'<testsuite><?xml version="1.0" encoding="cp037"?><testcase name="t"/></testsuite>'
    assert parse_junit(later).notes[0] == "not a readable JUnit XML document: its encoding is not declared"


def test_a_utf16_report_is_read() -> None:
    report = (
        '<?xml version="1.0" encoding="UTF-16"?>'
        '<testsuite><testcase classname="A" name="b"><error/></testcase></testsuite>'
    )
    parsed = parse_junit(report.encode("utf-16"))
    assert [(f.test_id, f.message) for f in parsed.failures] == [("A.b", "failed")]
    assert parsed.counts == Counts(passed=0, failed=0, skipped=0, errors=1)
