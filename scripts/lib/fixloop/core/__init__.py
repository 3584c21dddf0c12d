"""Ids, errors, the JSON codec, redaction and agent names: standard library only, no fixloop imports."""
