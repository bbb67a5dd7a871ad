"""Verification runs: one verifier configuration over a scope of completions, as a background job whose chunks any
number of worker processes share.

- `requests`: create, cancel, resume and restart a run, with their checks.
- `scope`: the completions a run covers, those still pending, and how they are cut into chunks (by id).
- `outcomes`: what the rules, a judge and a cascade make of a chunk's completions.
- `chunks`: planning, claiming and committing chunks (a chunk's verdicts, its end and the run's progress in one
  transaction that checks the worker still holds it).
- `pipeline`: one worker process's share of a run (the rules a chunk at a time; a judge streamed across chunks).
- `execution`: the run's execution and its helpers, registered as the `verification-run` job kind.

A run's verdicts are usable once committed; a failed judge call is not, so a resume asks again. A restart verifies
the whole scope again: only verdicts written since it count as done (`redo_from`), and chunks planned before it can
never be committed.
"""

from __future__ import annotations

from ..models import VerificationRun, VerifierConfig
from ..selectors import cascade_figures
from .execution import VERIFICATION_RUN, claim, execute_run, stale_after
from .outcomes import CascadeOutcome, RuleOutcome, cascade_outcome, verify_with_rules
from .requests import (
    DEFAULT_CHUNK_SIZES,
    MAX_CHUNK_DELAY,
    MAX_CHUNK_SIZE,
    RunRequestError,
    cancel_run,
    clean_options,
    clean_scope_filters,
    create_run,
    restart_run,
    resume_run,
)
from .scope import COUNT_KEYS, pending_completions, scope_completions, scope_counts, scope_filter


def cascade_report(run: VerificationRun) -> dict | None:
    """Per-stage figures of a cascade run over its scope (since the restart, if any); None for other verifiers."""
    if run.verifier.kind != VerifierConfig.Kind.CASCADE:
        return None
    return cascade_figures(run.verifier_id, scope_filter(run).values("pk"), since=run.redo_from)


__all__ = [
    "COUNT_KEYS",
    "DEFAULT_CHUNK_SIZES",
    "MAX_CHUNK_DELAY",
    "MAX_CHUNK_SIZE",
    "VERIFICATION_RUN",
    "CascadeOutcome",
    "RuleOutcome",
    "RunRequestError",
    "cancel_run",
    "cascade_outcome",
    "cascade_report",
    "claim",
    "clean_options",
    "clean_scope_filters",
    "create_run",
    "execute_run",
    "pending_completions",
    "restart_run",
    "resume_run",
    "scope_completions",
    "scope_counts",
    "scope_filter",
    "stale_after",
    "verify_with_rules",
]
