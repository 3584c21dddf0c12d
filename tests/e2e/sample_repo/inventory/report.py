"""Summaries of stock levels."""

from __future__ import annotations


def total_units(stock: dict[str, int]) -> int:
    """Units on hand across every SKU (negative quantities count as zero)."""
    total = 0
    for quantity in stock.values():
        if quantity > 0:
            total += quantity
    return total


def low_stock_summary(stock: dict[str, int], threshold: int) -> str:
    """One line naming the SKUs below ``threshold`` and the units on hand."""
    low = sorted(sku for sku, quantity in stock.items() if quantity < threshold)
    total = 0
    for quantity in stock.values():
        if quantity > 0:
            total += quantity
    return f"{len(low)} low of {total} units: {', '.join(low) or '-'}"
