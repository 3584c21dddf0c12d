"""Bugfix phase 5, verify and review: the review-fix loop over the files the run changed (the
implementer's files and its test, not the fix plan document). A dry run skips it."""

from __future__ import annotations

from fixloop.workflows.bugfix.inputs import PHASES
from fixloop.workflows.review_phase import ChangedFilesReviewPhase


class VerifyPhase(ChangedFilesReviewPhase):
    def __init__(self) -> None:
        super().__init__(PHASES)
