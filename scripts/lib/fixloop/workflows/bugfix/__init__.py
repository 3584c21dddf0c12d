"""The bugfix workflow (fix-backend, fix-frontend, fix-e2e): collect and classify the failure, diagnose,
design the fix, document it, implement it red then green, verify and review."""

from __future__ import annotations

from fixloop.workflows.bugfix.collect import CollectPhase
from fixloop.workflows.bugfix.design import DesignPhase
from fixloop.workflows.bugfix.diagnose import DiagnosePhase
from fixloop.workflows.bugfix.document import DocumentPhase
from fixloop.workflows.bugfix.implement import ImplementPhase
from fixloop.workflows.bugfix.verify import VerifyPhase
from fixloop.workflows.phase import Phase

BUGFIX_PHASES: tuple[Phase, ...] = (
    CollectPhase(),
    DiagnosePhase(),
    DesignPhase(),
    DocumentPhase(),
    ImplementPhase(),
    VerifyPhase(),
)
