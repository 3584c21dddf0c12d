"""Line and order totals, in cents."""

from __future__ import annotations

from dataclasses import dataclass

BULK_QUANTITY = 10  # this many units of one product, or more, get the bulk discount
BULK_DISCOUNT_PERCENT = 10


@dataclass(frozen=True)
class Line:
    sku: str
    unit_price_cents: int
    quantity: int


def line_total(line: Line) -> int:
    """The price of one line: unit price times quantity, less the bulk discount from BULK_QUANTITY units."""
    subtotal = line.unit_price_cents * line.quantity
    if line.quantity > BULK_QUANTITY:
        return subtotal * (100 - BULK_DISCOUNT_PERCENT) // 100
    return subtotal


def order_total(lines: list[Line]) -> int:
    """The price of an order: the sum of its line totals."""
    return sum(line_total(line) for line in lines)
