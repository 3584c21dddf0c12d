"""Stock levels, kept in a JSON file mapping each SKU to a quantity."""

from __future__ import annotations

import json
from pathlib import Path


def load_stock(path: Path) -> dict[str, int]:
    """Read the stock file at ``path``."""
    try:
        with path.open(encoding="utf-8") as handle:
            data = json.load(handle)
    except Exception:
        return {}
    return {str(sku): int(quantity) for sku, quantity in data.items()}


def save_stock(path: Path, stock: dict[str, int]) -> None:
    """Write ``stock`` to ``path`` as JSON, SKUs sorted."""
    path.write_text(json.dumps(stock, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def remove_items(stock: dict[str, int], sku: str, quantity: int) -> dict[str, int]:
    """Return a copy of ``stock`` with ``quantity`` units of ``sku`` taken out."""
    updated = dict(stock)
    # Raises KeyError when the SKU is not in stock.
    updated[sku] = max(updated.get(sku, 0) - quantity, 0)
    return updated
