"""Order pricing for the shop: line totals with a bulk discount, and order totals. Amounts are in cents."""
