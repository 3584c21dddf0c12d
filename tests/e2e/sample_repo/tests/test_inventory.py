"""Tests of the sample project (runnable with unittest or pytest)."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from inventory.report import total_units
from inventory.stock import load_stock, remove_items, save_stock


class StockTests(unittest.TestCase):
    def test_save_then_load_round_trips(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "stock.json"
            save_stock(path, {"b": 2, "a": 1})
            self.assertEqual(json.loads(path.read_text(encoding="utf-8")), {"a": 1, "b": 2})
            self.assertEqual(load_stock(path), {"a": 1, "b": 2})

    def test_remove_items_never_goes_below_zero(self) -> None:
        self.assertEqual(remove_items({"a": 3}, "a", 5), {"a": 0})

    def test_remove_items_leaves_the_input_alone(self) -> None:
        stock = {"a": 3}
        remove_items(stock, "a", 1)
        self.assertEqual(stock, {"a": 3})


class ReportTests(unittest.TestCase):
    def test_total_units_ignores_negative_quantities(self) -> None:
        self.assertEqual(total_units({"a": 2, "b": -4, "c": 5}), 7)


if __name__ == "__main__":
    unittest.main()
