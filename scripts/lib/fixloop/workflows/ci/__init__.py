"""The fix-ci workflow (`/fixloop:fix-ci`, workflow ci-job): take a failed CI job (a GitHub Actions run
through gh, or any CI's log file), cut its log down to its failures, classify them, reproduce them locally,
fix them red then green, review the fix and report."""

from __future__ import annotations

from fixloop.workflows.ci import performers
from fixloop.workflows.ci.classify import ClassifyPhase
from fixloop.workflows.ci.fetch import FetchPhase
from fixloop.workflows.ci.fix import FixPhase
from fixloop.workflows.ci.report import ReportPhase
from fixloop.workflows.ci.reproduce import ReproducePhase
from fixloop.workflows.ci.review import CiReviewPhase
from fixloop.workflows.ci.source import SourcePhase
from fixloop.workflows.phase import Phase

CI_PHASES: tuple[Phase, ...] = (
    SourcePhase(),
    FetchPhase(),
    ClassifyPhase(),
    ReproducePhase(),
    FixPhase(),
    CiReviewPhase(),
    ReportPhase(),
)

performers.register()
