"""PreToolUse (Bash) of a fixloop subagent that only reads: hold it to read-only commands.

Reviewers, the verifier, the classifier, the reply writer and the analysts read a stranger's code, PR
comments and CI logs; a prompt injected there must not get a command run. Only the agents that edit
(WRITER_AGENTS) keep the Bash tool as the session's permissions give it; for every other fixloop agent a
Bash call is refused unless it is one simple command from a short list of programs that only read (git's
reading subcommands, grep, ls, cat, ...), with no shell syntax that could start anything else: no `;`,
`&`, `|`, redirections, `$`, backquotes, subshells or line breaks, and none of the options that make those
programs write or run a command (`git diff --output`, `find -exec`, `sort -o`, ...).

A refusal is Claude Code's PreToolUse `permissionDecision: "deny"`, which holds in every permission mode
(bypassPermissions included). An allowed command gets no decision: the session's own rules still apply.
Standard library only; hooks/run-hook starts no interpreter for calls that are not a fixloop agent's.
"""

from __future__ import annotations

import sys

from fixloop.core import agent_names, jsoncodec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

WRITER_AGENTS = frozenset({"review-fixer", "implementer", "task-implementer"})
READERS = frozenset(
    {"git", "grep", "rg", "ls", "cat", "head", "tail", "wc", "nl", "sort", "cut", "diff", "find"}
    | {"stat", "pwd", "basename", "dirname", "realpath", "echo"}
)
GIT_READERS = frozenset(
    {"blame", "cat-file", "describe", "diff", "grep", "log", "ls-files", "ls-tree", "merge-base"}
    | {"rev-list", "rev-parse", "shortlog", "show", "status"}
)
# Options that make a reading program write a file or start another program: whole words (also as
# `--option=value`), and the letters of short options, refused also inside a group such as `sort -no F`.
REFUSED_OPTIONS: dict[str, tuple[str, ...]] = {
    "git": ("--output", "--open-files-in-pager", "--ext-diff", "--textconv", "--exec"),
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "sort": ("--output", "--compress-program"),
    "rg": ("--pre", "--pre-glob", "--search-zip"),
}
REFUSED_LETTERS: dict[str, str] = {"git": "O", "sort": "o", "rg": "z"}
SHELL_CHARACTERS = ("$", "`", "\n", "\r", "\x00")
SHELL_OPERATORS = frozenset("();<>|&")


def words_of(command: str) -> list[str] | None:
    """The words of a command with no shell syntax beyond quoting, or None when it has any."""
    if any(character in command for character in SHELL_CHARACTERS):
        return None
    import shlex  # only a command that gets this far pays for it (shlex brings re and collections)

    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = list(lexer)
    except ValueError:
        return None
    if any(word and set(word) <= SHELL_OPERATORS for word in words):
        return None
    return words


def _refused_option(program: str, arguments: Sequence[str]) -> str | None:
    words = REFUSED_OPTIONS.get(program, ())
    letters = REFUSED_LETTERS.get(program, "")
    for argument in arguments:
        if argument == "--":
            return None
        if any(argument == word or argument.startswith(word + "=") for word in words):
            return argument
        is_group = argument.startswith("-") and not argument.startswith("--")
        if is_group and program != "find" and any(letter in argument[1:] for letter in letters):
            return argument
    return None


def refusal(command: object) -> str | None:
    """Why `command` is not a read-only command (None: it is one)."""
    if not isinstance(command, str) or not command.strip():
        return "the call names no command"
    words = words_of(command)
    if words is None:
        return "it uses shell syntax ($, backquotes, ;, &, |, redirections, subshells or line breaks)"
    program, arguments = words[0], words[1:]
    if "=" in program or program not in READERS:
        return f"{program!r} is not one of the read-only programs ({', '.join(sorted(READERS))})"
    if program == "git" and (not arguments or arguments[0] not in GIT_READERS):
        return f"only these git subcommands read without writing: {', '.join(sorted(GIT_READERS))}"
    option = _refused_option(program, arguments)
    if option is not None:
        return f"{program}'s option {option!r} writes a file or runs a command"
    return None


def decide(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Claude Code's PreToolUse answer for `payload`: a denial, or None to leave the call alone."""
    if payload.get("hook_event_name") != "PreToolUse" or payload.get("tool_name") != "Bash":
        return None
    agent = agent_names.agent_name(payload.get("agent_type"), plugin_only=True)
    if agent is None or agent in WRITER_AGENTS:
        return None
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    why = refusal(command)
    if why is None:
        return None
    reason = (
        f"fixloop: {agent} only reads, so its Bash calls are held to read-only commands; this one is "
        f"refused: {why}. Read files with the Read tool, search with grep or git grep, and see changes "
        "with git diff, git log or git show, one command per call."
    )
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def main(stdin: str) -> str:
    """The hook's stdout for the payload `stdin`. A payload that cannot be read is refused: this hook only
    starts for a fixloop agent's Bash call (hooks/run-hook), and it fails closed."""
    try:
        payload = jsoncodec.loads(stdin)
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "agent_type": "fixloop:?"}
    answer = decide(payload)
    return jsoncodec.dumps(answer) if answer is not None else ""


if __name__ == "__main__":  # pragma: no cover - hooks/readonly.py is the entry point
    sys.stdout.write(main(sys.stdin.read()))
