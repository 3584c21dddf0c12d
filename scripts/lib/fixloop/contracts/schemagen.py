"""Generate the checked-in JSON Schemas (draft 2020-12) of every document KIND from the pydantic models.

    python -m fixloop.contracts.schemagen           rewrite fixloop/contracts/schemas/<kind>.schema.json
                                                    and the agents' contract texts, contract-texts.json
    python -m fixloop.contracts.schemagen --check   exit 1 and list the files that differ from the models

The schemas describe the canonical documents (what `fixloop validate` prints). The validator also accepts a
few input spellings the schemas do not list: the simple array's issue field names, severities in any
case, numeric strings for `line`, and `fixloop:`/`review-` prefixed agent names.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fixloop.contracts.examples import KIND_EXAMPLES
from fixloop.contracts.kinds import KIND_DESCRIPTIONS, KINDS
from fixloop.contracts.prompt_text import TEXTS_FILE, contract_models, rendered_contract_text

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE_URL = "https://fixloop.dev/schemas/"
SUFFIX = ".schema.json"


def schema_id(kind: str) -> str:
    return f"{SCHEMA_BASE_URL}{kind}.json"


def schema_path(kind: str, directory: Path = SCHEMA_DIR) -> Path:
    return directory / f"{kind}{SUFFIX}"


def build_schema(kind: str) -> dict[str, Any]:
    schema = KINDS[kind].model_json_schema(mode="validation")
    schema.update(
        {
            "$schema": SCHEMA_DIALECT,
            "$id": schema_id(kind),
            "title": f"fixloop {kind}",
            "description": KIND_DESCRIPTIONS[kind],
            "examples": [KIND_EXAMPLES[kind]],
        }
    )
    return schema


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def contract_texts() -> str:
    """Every agent's contract text (prompt_text), kind -> text in CONTRACT_KINDS order, as JSON."""
    texts = {kind: rendered_contract_text(kind) for kind in contract_models()}
    return json.dumps(texts, indent=2, ensure_ascii=False) + "\n"


def expected_files(directory: Path = SCHEMA_DIR) -> dict[Path, str]:
    files = {schema_path(kind, directory): render(build_schema(kind)) for kind in KINDS}
    files[directory / TEXTS_FILE.name] = contract_texts()
    return files


def drifted(directory: Path = SCHEMA_DIR) -> list[Path]:
    """Files that are missing, differ from the models, or belong to no kind."""
    expected = expected_files(directory)
    stale = [path for path, text in expected.items() if not path.is_file() or _read(path) != text]
    extra = sorted(p for p in directory.glob(f"*{SUFFIX}") if p not in expected) if directory.is_dir() else []
    return [*stale, *extra]


def write(directory: Path = SCHEMA_DIR) -> list[Path]:
    """Rewrite every schema file that drifted (deleting files of unknown kinds); return what changed."""
    changed = drifted(directory)
    expected = expected_files(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for path in changed:
        if path in expected:
            path.write_text(expected[path], encoding="utf-8")
        else:
            path.unlink()
    return changed


def load_schema(kind: str, directory: Path = SCHEMA_DIR) -> dict[str, Any]:
    """The checked-in schema of `kind` (KeyError for an unknown kind, OSError when the file is missing)."""
    if kind not in KINDS:
        raise KeyError(kind)
    loaded = json.loads(schema_path(kind, directory).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fixloop.contracts.schemagen", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--check", action="store_true", help="only report drifted files; exit 1 if any")
    parser.add_argument(
        "--dir", type=Path, default=SCHEMA_DIR, help="schema directory (default: the package's own)"
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = drifted(args.dir)
        for path in stale:
            print(f"drifted: {path}")
        if stale:
            print("run `python -m fixloop.contracts.schemagen` to regenerate", file=sys.stderr)
            return 1
        print(f"schemas up to date ({len(KINDS)} kinds)")
        return 0
    for path in write(args.dir):
        print(f"wrote: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
