"""A slash command as typed: flags taken out wherever they stand, every other character kept."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixloop.core.errors import FixloopError
from fixloop.runs.typed_command import parse_options, parse_typed_command

HOSTILE = (
    "fails with `KeyError` when price is $0 and \"name\" is 'x'\nsecond line: $(rm -rf ~) ; | & > é 名前"
)


def test_words_with_shell_characters_new_lines_and_any_script_stay_exact() -> None:
    typed = parse_typed_command(f"/fixloop:fix-backend {HOSTILE}", "fix-backend")
    assert (typed.workflow, typed.stack, typed.options) == ("bugfix", "backend", {})
    assert typed.text == HOSTILE


def test_flags_anywhere_are_taken_out_and_the_rest_is_kept() -> None:
    typed = parse_typed_command(
        '/fixloop:review --dry-run src/a.py --phase 0 --log-file "my log.txt" docs', "review"
    )
    assert typed.options == {"dry_run": True, "phase": "0", "log_file": "my log.txt"}
    assert typed.text == "src/a.py docs"
    assert parse_typed_command("/fixloop:fix-ci --phase=1,2 --no-log 123", "fix-ci").options == {
        "phase": "1,2",
        "log": False,
    }


def test_double_dash_ends_the_flags() -> None:
    typed = parse_typed_command("/fixloop:fix-e2e -- --dry-run is what the test says", "fix-e2e")
    assert (typed.options, typed.text) == ({}, "--dry-run is what the test says")


def test_verbose_means_debug() -> None:
    assert parse_typed_command("/fixloop:review --verbose", "review").level == "debug"
    assert parse_typed_command("/fixloop:review", "review").level == "info"


@pytest.mark.parametrize(
    ("prompt", "code"),
    [
        ("/fixloop:review --dry-rn", "UNKNOWN_ARGUMENT"),
        ("/fixloop:review --phase", "MISSING_ARGUMENT_VALUE"),
        ("/fixloop:review --level loud", "INVALID_ARGUMENT"),
        ("/fixloop:reviewer x", "PROMPT_MISMATCH"),
        ("/fixloop:fix-ci 1", "PROMPT_MISMATCH"),
    ],
)
def test_bad_words_are_refused_with_a_code(prompt: str, code: str) -> None:
    with pytest.raises(FixloopError) as caught:
        parse_typed_command(prompt, "review")
    assert caught.value.code == code


def test_a_misspelt_flag_gets_a_suggestion() -> None:
    with pytest.raises(FixloopError) as caught:
        parse_typed_command("/fixloop:review --dry-rn", "review")
    assert caught.value.message == "Unknown argument '--dry-rn'. Did you mean --dry-run?"


@given(st.text(max_size=200).filter(lambda text: "--" not in text))
def test_text_without_flags_is_kept_as_typed_but_for_outer_space(text: str) -> None:
    options, free = parse_options(" " + text)
    assert options == {}
    assert free == text.strip()
