"""How every CLI command prints its answer: one JSON document on stdout (or a document meant for people,
such as a Markdown report), never a traceback. The JSON answer and the error wrapper are
fixloop.core.command_output's, shared with the click-free `fixloop record` of the hooks."""

from __future__ import annotations

import sys

from fixloop.core.command_output import fail as fail
from fixloop.core.command_output import guarded as guarded
from fixloop.core.command_output import print_json as print_json


def print_text(text: str) -> None:
    """A document that is not JSON (a Markdown or HTML report, a summary for people), as it is."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
