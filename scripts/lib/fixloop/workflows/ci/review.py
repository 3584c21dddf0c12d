"""fix-ci phase 5, verify and review: the review-fix loop over the files phase 4 changed. A dry run skips
it."""

from __future__ import annotations

from fixloop.workflows.ci.inputs import PHASES
from fixloop.workflows.review_phase import ChangedFilesReviewPhase


class CiReviewPhase(ChangedFilesReviewPhase):
    def __init__(self) -> None:
        super().__init__(PHASES)
