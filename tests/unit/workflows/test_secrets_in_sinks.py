"""No file a run writes, and no report or command output of it, holds a secret that an agent wrote in its
answers or that a verification command printed: answers are redacted as they are recorded, and every sink
(state, its backup and history, the logs, the tasks, the reports) is made from what was recorded."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers_review import reviewer_doc
from helpers_secrets import (
    keyed_token_texts,
    keyed_value_texts,
    prefixed_secrets,
    secret_assignment_texts,
    token_secrets,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from workflows.drive_helpers import FIXER, VERIFIER, drive, fixer_answer, fresh_project, verifier_answer
from workflows.flow_helpers import CR, invoke_text, log_path, review_project

from fixloop.contracts.common import repo_relative_path
from fixloop.core.redact import REDACTED
from fixloop.core.secret_rules import PREFIXED_RULES, TOKEN_RULES
from fixloop.runs import creation
from fixloop.store import layout

Secret = tuple[str, str, str]  # (rule id, the text that holds it, the secret itself)


# Every rule, in groups: one run holds a secret of each rule of its group (a run of them all would ask
# hypothesis for more data than it draws for one example).
RULES = [
    *(rule_id for rule_id, _markers, _pattern in TOKEN_RULES),
    *(rule_id for rule_id, _markers, _pattern in PREFIXED_RULES),
    "secret-assignment",
    "keyed-value",
    "keyed-token",
]
GROUP = 12
GROUPS = [RULES[start : start + GROUP] for start in range(0, len(RULES), GROUP)]
PREFIXED = {rule_id for rule_id, _markers, _pattern in PREFIXED_RULES}
KEYED_TEXTS = {
    "secret-assignment": secret_assignment_texts,
    "keyed-value": keyed_value_texts,
    "keyed-token": keyed_token_texts,
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def path_form(text: str) -> str:
    """`text` as it can stand in a file path: the contract refuses a path that holds a control character (a
    tab or a line break), so each becomes a space. Every rule that matches `text` matches this form too."""
    return _CONTROL.sub(" ", text)


def file_of(text: str) -> str:
    return f"config/{path_form(text)}.env"


@st.composite
def secret_sets(draw: st.DrawFn, rule_ids: list[str]) -> list[Secret]:
    """A secret of each rule named."""
    found: list[Secret] = []
    for rule_id in rule_ids:
        if rule_id in PREFIXED:
            found.append(draw(prefixed_secrets(rule_id)))
        elif rule_id in KEYED_TEXTS:
            text, value = draw(KEYED_TEXTS[rule_id]())
            found.append((rule_id, text, value))
        else:
            _, secret = draw(token_secrets([rule_id]))
            found.append((rule_id, secret, secret))
    for _rule, text, _secret in found:
        try:
            repo_relative_path(file_of(text))
        except ValueError:  # a `..` or `.git` part, or too long: an invalid path whatever it holds
            assume(False)
    return found


def reviewer_answer(secrets: list[Secret]) -> dict[str, Any]:
    issues = [
        {
            "id": f"CR-{number}",
            "severity": "high",
            "confidence": 95,
            "file": file_of(text),
            "line": 1,
            "category": "security",
            "rule": f"never commit {text}",
            "description": f"Found {text} in the config ({number})",
            "suggestion": f"Remove `{text}` and rotate it",
            "auto_fixable": True,
            "existing_code": f'KEY = "{text}"',
            "improved_code": f"KEY = os.environ['KEY']  # was {text}",
        }
        for number, (_rule, text, _secret) in enumerate(secrets)
    ]
    return {
        "status": "success",
        "agent": CR,
        "issues": issues,
        "positive_observations": [f"Tests cover {secrets[0][1]}"],
    }


def run_with_secrets(root: Path, secrets: list[Secret], outside: Path) -> tuple[str, dict[str, str]]:
    """A whole debug-level review run where the secrets are in every answer and in what the test command
    prints; (run id, what the commands printed: `verify` and each report)."""
    printed = outside / "secrets.txt"
    printed.write_text("\n".join(text for _rule, text, _secret in secrets) + "\n", encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(f'print(open({str(printed)!r}).read())')}"
    review_project(root, test_command=command)
    run_id: str = creation.start_run("review", root=root, git_base="", level="debug")["state"]["run_id"]
    texts = {number: text for number, (_rule, text, _secret) in enumerate(secrets)}
    said = {"reviewed": False}

    def answer(agent: str, handed: list[dict[str, Any]] | None) -> Any:
        if agent == VERIFIER:
            assert handed is not None
            return verifier_answer(handed, lambda issue_id: f"line 1 of {issue_id} holds {texts[0]}")
        if agent == FIXER:
            assert handed is not None
            return fixer_answer(
                handed, "failed", lambda issue_id: f"could not rotate {texts[len(texts) - 1]}"
            )
        if agent == CR and not said["reviewed"]:
            said["reviewed"] = True
            return reviewer_answer(secrets)
        return reviewer_doc(agent)

    outputs = {"verify": invoke_text("verify", run_id)[1]}
    steps = drive(root, run_id, answer)
    assert steps[-1].command == "next"
    assert (steps[-1].code, steps[-1].output["action"]) == (0, "stop"), steps[-1]
    assert [step for step in steps if step.code != 0] == []
    for fmt in ("json", "array", "markdown", "sarif"):
        outputs[f"report {fmt}"] = invoke_text("review", "report", run_id, "--format", fmt)[1]
    return run_id, outputs


def sinks(root: Path, run_id: str, outputs: dict[str, str]) -> dict[str, str]:
    """Every file of the run (state, its backup and history, ledger, tasks) and of its logs, and `outputs`."""
    found = dict(outputs)
    for directory in (Path(layout.run_dir(root, run_id)), log_path(root, run_id).parent):
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                found[str(path)] = path.read_text(encoding="utf-8", errors="replace")
    return found


def readings(text: str) -> list[str]:
    """`text` as it is, with JSON strings decoded, and with Markdown backslash escapes undone."""
    decoded: list[str] = []
    for chunk in [text, *text.splitlines()]:
        try:
            decoded.append(json.dumps(json.loads(chunk), ensure_ascii=False).replace('\\"', '"'))
        except ValueError:
            continue
        decoded.append("\n".join(_strings(json.loads(chunk))))
    return [text, re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text), *decoded]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (key, *_strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


@pytest.mark.parametrize("group", GROUPS, ids=[group[0] for group in GROUPS])
@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
@given(data=st.data())
def test_no_sink_holds_a_secret_of_any_rule(
    group: list[str],
    data: st.DataObject,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    secrets = data.draw(secret_sets(group))
    with fresh_project(monkeypatch) as root:
        run_id, outputs = run_with_secrets(root, secrets, tmp_path_factory.mktemp("outside"))
        files = sinks(root, run_id, outputs)
        state = files[str(Path(layout.state_path(root, run_id)))]
        assert state.count(REDACTED) >= len(secrets)  # the answers were recorded, masked
        assert REDACTED in files["verify"]
        leaks = {
            (rule, name)
            for rule, _text, secret in secrets
            for name, text in files.items()
            if any(form in reading for form in {secret, path_form(secret)} for reading in readings(text))
        }
        assert leaks == set()


# gitleaks' literal true positives (tests/unit/core/secret_vectors.json), in groups: each group is one run.
_VECTORS = json.loads(
    (Path(__file__).parents[1] / "core" / "secret_vectors.json").read_text(encoding="utf-8")
)["true_positives"]
_WORD = re.compile(r"[^\s\"'`=:,;(){}\[\]<>]+")


def _vector_secret(text: str) -> str:
    from fixloop.core.redact import redact

    masked = redact(text)
    return max((word for word in _WORD.findall(text) if word not in masked), key=len)


VECTOR_SECRETS: list[Secret] = [
    (rule, path_form(text), _vector_secret(path_form(text)))
    for rule, texts in _VECTORS.items()
    for text in texts
]
VECTOR_GROUP = 32
VECTOR_GROUPS = [
    VECTOR_SECRETS[start : start + VECTOR_GROUP] for start in range(0, len(VECTOR_SECRETS), VECTOR_GROUP)
]


@pytest.mark.parametrize("group", VECTOR_GROUPS, ids=[group[0][0] for group in VECTOR_GROUPS])
def test_no_sink_holds_a_gitleaks_test_secret(
    group: list[Secret], monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from fixloop.core.redact import redact

    # A word one text hides may stand in clear in another (the user name of a URL with a password).
    in_clear = "\n".join(redact(text) for _rule, text, _secret in group)
    with fresh_project(monkeypatch) as root:
        run_id, outputs = run_with_secrets(root, group, tmp_path_factory.mktemp("outside"))
        files = sinks(root, run_id, outputs)
        leaks = {
            (rule, secret, name)
            for rule, _text, secret in group
            if secret not in in_clear
            for name, text in files.items()
            if any(secret in reading for reading in readings(text))
        }
        assert leaks == set()
