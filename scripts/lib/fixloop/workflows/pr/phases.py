"""The eight phases of fix-pr-review, in order (runs.phases names them), and their engine work."""

from __future__ import annotations

from fixloop.workflows.phase import Phase
from fixloop.workflows.pr import performers
from fixloop.workflows.pr.classify import ClassifyPhase
from fixloop.workflows.pr.fix import FixPhase
from fixloop.workflows.pr.gather import FetchPhase, FilterPhase, InitPhase
from fixloop.workflows.pr.post import PostPhase
from fixloop.workflows.pr.replies import ReplyPhase
from fixloop.workflows.pr.review import PrReviewPhase

PR_REVIEW_PHASES: tuple[Phase, ...] = (
    InitPhase(),
    FetchPhase(),
    FilterPhase(),
    ClassifyPhase(),
    FixPhase(),
    ReplyPhase(),
    PostPhase(),
    PrReviewPhase(),
)

performers.register()
