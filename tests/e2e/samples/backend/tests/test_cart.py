"""Tests of pricing.cart."""

from __future__ import annotations

from pricing.cart import Line, line_total, order_total


def test_nine_units_pay_full_price() -> None:
    assert line_total(Line("pen", 250, 9)) == 2250


def test_ten_units_get_the_bulk_discount() -> None:
    assert line_total(Line("pen", 250, 10)) == 2250


def test_order_total_adds_the_lines() -> None:
    assert order_total([Line("pen", 250, 2), Line("pad", 400, 1)]) == 900
