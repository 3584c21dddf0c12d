from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixloop.core.errors import FixloopError
from fixloop.runs.command_args import KNOWN_FLAGS, CommandArgs, parse_command_args


def test_empty_and_none_give_defaults() -> None:
    assert parse_command_args(None) == CommandArgs()
    assert parse_command_args("   ") == CommandArgs()
    assert CommandArgs().to_dict() == {
        "phase": None,
        "dry_run": False,
        "log": None,
        "verbose": False,
        "level": None,
        "rest": "",
    }


def test_flags_and_free_text() -> None:
    parsed = parse_command_args("--phase=0,1 --dry-run fix the login button --log")
    assert parsed == CommandArgs(phase="0,1", dry_run=True, log=True, rest="fix the login button")


def test_phase_as_separate_word() -> None:
    assert parse_command_args("--phase 0,1 text").phase == "0,1"
    assert parse_command_args('--phase "2" text').phase == "2"
    assert parse_command_args("--phase all").phase == "all"


def test_phase_value_is_not_validated_here() -> None:
    assert parse_command_args("--phase=9").phase == "9"


def test_later_log_flag_wins() -> None:
    assert parse_command_args("--log --no-log").log is False
    assert parse_command_args("--no-log --log").log is True
    assert parse_command_args("--phase=1 --phase=2").phase == "2"


def test_level() -> None:
    assert parse_command_args("").effective_level == "info"
    assert parse_command_args("--verbose").effective_level == "debug"
    assert parse_command_args("--verbose").verbose is True
    assert parse_command_args("--level=debug").effective_level == "debug"
    assert parse_command_args("--level info").level == "info"


def test_double_dash_ends_flags() -> None:
    parsed = parse_command_args("--dry-run -- --verbose is text")
    assert parsed == CommandArgs(dry_run=True, rest="--verbose is text")


def test_single_dash_words_are_text() -> None:
    assert parse_command_args("off by -1 error").rest == "off by -1 error"


def test_quoted_text_keeps_its_words() -> None:
    assert parse_command_args('--dry-run "login fails" on submit').rest == "login fails on submit"


def test_unbalanced_apostrophe_falls_back_to_whitespace_split() -> None:
    parsed = parse_command_args("the parser doesn't handle it --dry-run")
    assert parsed == CommandArgs(dry_run=True, rest="the parser doesn't handle it")


def test_unknown_flag_suggests_the_close_one() -> None:
    with pytest.raises(FixloopError) as caught:
        parse_command_args("--dryrun text")
    error = caught.value
    assert error.code == "UNKNOWN_ARGUMENT"
    assert error.exit_code == 2
    assert error.details == {
        "received": "--dryrun",
        "valid_values": list(KNOWN_FLAGS),
        "suggestion": "Did you mean --dry-run?",
    }


def test_unknown_flag_with_value_names_the_flag() -> None:
    with pytest.raises(FixloopError) as caught:
        parse_command_args("--phases=0")
    assert caught.value.message == "Unknown argument '--phases'."
    assert caught.value.details["suggestion"] == "Did you mean --phase?"


def test_unrelated_unknown_flag_points_at_double_dash() -> None:
    with pytest.raises(FixloopError) as caught:
        parse_command_args("--zzz")
    assert caught.value.details["suggestion"] == "Put free text after `--` if it starts with --."


@pytest.mark.parametrize("text", ["--phase", "--phase=", "--phase --dry-run", "--level"])
def test_missing_value(text: str) -> None:
    with pytest.raises(FixloopError) as caught:
        parse_command_args(text)
    assert caught.value.code == "MISSING_ARGUMENT_VALUE"


@pytest.mark.parametrize("text", ["--dry-run=yes", "--log=1", "--level=trace"])
def test_bad_values(text: str) -> None:
    with pytest.raises(FixloopError) as caught:
        parse_command_args(text)
    assert caught.value.code == "INVALID_ARGUMENT"


@given(st.text(max_size=200))
def test_any_text_parses_or_raises_a_fixloop_error(text: str) -> None:
    try:
        parsed = parse_command_args(text)
    except FixloopError as error:
        assert error.code in {"UNKNOWN_ARGUMENT", "MISSING_ARGUMENT_VALUE", "INVALID_ARGUMENT"}
    else:
        assert isinstance(parsed.rest, str)


@given(st.lists(st.from_regex(r"[A-Za-z0-9_.,:/]{1,10}", fullmatch=True), max_size=8))
def test_plain_words_become_rest(words: list[str]) -> None:
    assert parse_command_args(" ".join(words)) == CommandArgs(rest=" ".join(words))
