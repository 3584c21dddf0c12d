"""Stock levels for a small shop: load them, change them, summarise them."""
