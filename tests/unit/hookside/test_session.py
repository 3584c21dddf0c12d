"""SessionStart's pieces in process (the hook itself runs in tests/hooks/test_session_start.py)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from fixloop.hookside import session


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "data"
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(directory))
    for name in ("CLAUDE_ENV_FILE", "FIXLOOP_NO_BUILD", "FIXLOOP_PYTHON"):
        monkeypatch.delenv(name, raising=False)
    return directory


def test_caches_this_interpreter_once(data: Path) -> None:
    data.mkdir()
    session.cache_interpreter(str(data), (3, 10))
    cached = data / session.PYTHON_PATH_FILE
    assert cached.read_text() == sys.executable + "\n"
    before = cached.stat().st_mtime_ns
    session.cache_interpreter(str(data), (3, 10))
    assert cached.stat().st_mtime_ns == before
    assert sorted(path.name for path in data.iterdir()) == [session.PYTHON_PATH_FILE]


def test_an_interpreter_below_the_minimum_is_not_cached(data: Path) -> None:
    data.mkdir()
    session.cache_interpreter(str(data), (99, 0))
    assert not (data / session.PYTHON_PATH_FILE).exists()


def test_exports_the_data_directory_once(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = tmp_path / "env.sh"
    monkeypatch.setenv("CLAUDE_ENV_FILE", str(env_file))
    odd = tmp_path / "a dir"
    session.export_data_dir(str(odd))
    session.export_data_dir(str(odd))
    assert env_file.read_text() == f"export FIXLOOP_DATA='{odd}'\n"


def test_no_build_when_fresh_or_not_wanted(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data.mkdir()
    asked: list[str] = []

    def fresh(directory: str) -> bool:
        asked.append(directory)
        return True

    assert session.start_build(str(data), fresh) is False
    assert asked == [str(data)]
    monkeypatch.setenv("FIXLOOP_NO_BUILD", "1")
    assert session.start_build(str(data), fresh) is False
    assert asked == [str(data)]
    assert not (data / session.BUILD_OUTPUT).exists()


def test_no_second_build_while_one_holds_the_lock(data: Path) -> None:
    import fcntl
    import os

    data.mkdir()
    fd = os.open(data / session.BUILD_LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert session.build_running(str(data)) is True
        assert session.start_build(str(data), lambda directory: False) is False
    finally:
        os.close(fd)
    assert session.build_running(str(data)) is False


def test_the_hook_fails_open(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(blocker / "data"))

    def broken(directory: str) -> bool:
        raise RuntimeError("never asked")

    assert session.session_start(broken, (3, 10), stdin=io.BytesIO(b"garbage")) == 0


def test_the_hook_caches_and_asks(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIXLOOP_NO_BUILD", "1")
    assert session.session_start(lambda directory: True, (3, 10), stdin=io.BytesIO(b"{}")) == 0
    assert (data / session.PYTHON_PATH_FILE).read_text() == sys.executable + "\n"


def test_the_user_is_told_while_another_session_builds_and_not_once_it_is_built(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import fcntl
    import json
    import os

    monkeypatch.delenv("FIXLOOP_NO_BUILD", raising=False)
    monkeypatch.delenv("FIXLOOP_PYTHON", raising=False)
    data.mkdir()
    fd = os.open(data / session.BUILD_LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a build under way
        assert session.session_start(lambda directory: False, (3, 10), stdin=io.BytesIO(b"{}")) == 0
    finally:
        os.close(fd)
    notice = json.loads(capsys.readouterr().out)
    assert notice == {
        "systemMessage": "fixloop is building its Python environment in the background (the first session "
        "only: a minute or two). A /fixloop command started meanwhile waits for it. Progress: "
        f"{data / session.BUILD_OUTPUT}"
    }
    assert session.session_start(lambda directory: True, (3, 10), stdin=io.BytesIO(b"{}")) == 0
    assert capsys.readouterr().out == ""
