from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.core.errors import FixloopError
from fixloop.plans import MAX_PLAN_BYTES, load, read_text


def failure(path: Path) -> FixloopError:
    with pytest.raises(FixloopError) as caught:
        load(path)
    return caught.value


def test_a_plan_file_is_loaded_with_its_source(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(b"# Plan\r\n- [ ] caf\xc3\xa9\r\n")
    plan = load(path)
    assert (plan.title, plan.tasks[0].title, plan.source) == ("Plan", "caf\u00e9", str(path))
    assert read_text(path) == "# Plan\r\n- [ ] caf\u00e9\r\n"


def test_a_missing_file_is_not_found(tmp_path: Path) -> None:
    error = failure(tmp_path / "nope.md")
    assert (error.code, error.message) == ("PLAN_NOT_FOUND", f"No plan file at {tmp_path / 'nope.md'}.")
    assert error.details == {"path": str(tmp_path / "nope.md")}


def test_a_directory_is_not_found(tmp_path: Path) -> None:
    error = failure(tmp_path)
    assert (error.code, error.message) == ("PLAN_NOT_FOUND", f"{tmp_path} is not a file.")


def test_an_unreadable_file_is_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "plan.md"
    path.write_text("- [ ] a\n", encoding="utf-8")

    def refuse(self: Path, *args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", refuse)
    error = failure(path)
    assert (error.code, error.message) == (
        "PLAN_NOT_FOUND",
        f"Cannot read the plan file {path}: Permission denied.",
    )


def test_a_file_over_two_megabytes_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(b"- [ ] a\n" + b"x" * (MAX_PLAN_BYTES - 7))
    error = failure(path)
    assert (error.code, error.message) == (
        "PLAN_INVALID",
        f"The plan file {path} is larger than 2 MB; split it into smaller plans.",
    )
    assert error.details == {"path": str(path), "max_bytes": 2 * 1024 * 1024}
    path.write_bytes(b"- [ ] a\n" + b"x" * (MAX_PLAN_BYTES - 8))
    assert len(load(path).tasks) == 1


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes(b"- [ ] caf\xe9\n")
    error = failure(path)
    assert (error.code, error.message) == (
        "PLAN_INVALID",
        f"The plan file {path} is not UTF-8 text (byte 9 cannot be read).",
    )
    assert error.details == {"path": str(path), "offset": 9}


def test_parse_problems_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_text("# Plan\n- [ ]\n", encoding="utf-8")
    error = failure(path)
    assert (error.code, error.message, error.details["source"]) == (
        "PLAN_INVALID",
        "line 2: task has no text",
        str(path),
    )
